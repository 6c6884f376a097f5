import { randomUUID } from 'node:crypto';
import { Pool } from 'undici';

/**
 * A minimal A2A 1.0 JSON-RPC client for load: `SendMessage` (blocking: the answer is the Message, or the Task in a
 * terminal or interrupted state) over a pool of keep-alive connections, one per caller in flight. The same code
 * drives our agent gateway and the reference server, so the client's own cost is identical on both sides.
 */
export interface A2aTarget {
  origin: string;
  /** Host header (our gateway routes `agent-{handle}.<domain>` by it; the reference ignores it). */
  host: string;
  headers?: Record<string, string>;
}

/** An answer that is not the expected result; `code` (short, without ids) is what the runner counts errors by. */
export class A2aCallError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export interface A2aPart {
  text?: string;
  [k: string]: unknown;
}
export interface A2aMessage {
  messageId: string;
  role: string;
  parts: A2aPart[];
  [k: string]: unknown;
}
export interface A2aTask {
  id: string;
  contextId: string;
  status: { state: string; message?: A2aMessage };
  artifacts?: { parts: A2aPart[] }[];
  history?: A2aMessage[];
}
export type SendResult = { message: A2aMessage } | { task: A2aTask };

export function a2aLoadClient(target: A2aTarget, connections: number) {
  const pool = new Pool(target.origin, { connections, pipelining: 1, keepAliveTimeout: 60_000 });
  let nextId = 1;
  const headers = { host: target.host, 'content-type': 'application/json', accept: 'application/json', 'a2a-version': '1.0', ...target.headers };
  return {
    /**
     * Sends one user message in a fresh context (with SendMessage's `configuration`, when given); resolves with the
     * JSON-RPC result, throws on anything else.
     */
    async send(text: string, configuration?: Record<string, unknown>): Promise<SendResult> {
      const body = JSON.stringify({
        jsonrpc: '2.0',
        id: nextId++,
        method: 'SendMessage',
        params: { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }] }, ...(configuration ? { configuration } : {}) },
      });
      const res = await pool.request({ method: 'POST', path: '/', headers, body });
      const raw = await res.body.text();
      let parsed: { result?: SendResult; error?: { code?: number; message?: string } } | undefined;
      try {
        parsed = JSON.parse(raw);
      } catch {
        throw new A2aCallError(`HTTP ${res.statusCode}, not JSON`, `HTTP ${res.statusCode}: ${raw.slice(0, 200)}`);
      }
      if (parsed?.error) {
        const e = parsed.error;
        throw new A2aCallError(`JSON-RPC ${e.code}: ${String(e.message).slice(0, 100)}`, `JSON-RPC error ${e.code} (HTTP ${res.statusCode}): ${String(e.message).slice(0, 300)}`);
      }
      if (res.statusCode !== 200) throw new A2aCallError(`HTTP ${res.statusCode}`, `HTTP ${res.statusCode}: ${raw.slice(0, 200)}`);
      if (!parsed?.result || typeof parsed.result !== 'object') throw new A2aCallError('no result', `a response without a result: ${raw.slice(0, 200)}`);
      return parsed.result;
    },
    async card(): Promise<{ status: number; body: any }> {
      const res = await pool.request({ method: 'GET', path: '/.well-known/agent-card.json', headers: { host: target.host } });
      const raw = await res.body.text();
      return { status: res.statusCode, body: res.statusCode === 200 ? JSON.parse(raw) : raw };
    },
    close: () => pool.close(),
  };
}

export type A2aLoadClient = ReturnType<typeof a2aLoadClient>;

const texts = (parts: A2aPart[] | undefined) => (parts ?? []).map((p) => (typeof p.text === 'string' ? p.text : '')).join('');

/** Everything the agent said in a result: a Message's parts, or a Task's artifacts, status message and agent turns. */
export function agentText(r: SendResult): string {
  if ('message' in r) return texts(r.message.parts);
  const t = r.task;
  return [...(t.artifacts ?? []).map((a) => texts(a.parts)), texts(t.status?.message?.parts), ...(t.history ?? []).filter((m) => m.role === 'ROLE_AGENT').map((m) => texts(m.parts))].join('\n');
}

/** What a correct answer looks like; a check throws an A2aCallError saying what was wrong. */
export interface Expectation {
  /** `message`: a bare reply (a Task is refused); `task`: a completed Task; `either`: a Message or a completed Task. */
  shape: 'message' | 'task' | 'either';
  /** Text the agent's answer must contain. */
  text: string;
}

/** Checks one result; returns its shape, so a scenario can say what the server answered with. */
export function check(r: SendResult, want: Expectation): 'message' | 'task' {
  const shape = 'message' in r && r.message ? 'message' : 'task' in r && r.task ? 'task' : undefined;
  if (!shape) throw new A2aCallError('neither message nor task', `the result is neither a Message nor a Task: ${JSON.stringify(r).slice(0, 200)}`);
  if (want.shape !== 'either' && shape !== want.shape) throw new A2aCallError(`a ${shape}, not a ${want.shape}`, `expected a ${want.shape}, got a ${shape}: ${JSON.stringify(r).slice(0, 300)}`);
  if (shape === 'message') {
    const m = (r as { message: A2aMessage }).message;
    if (m.role !== 'ROLE_AGENT') throw new A2aCallError(`message role ${m.role}`, `the reply's role is ${m.role}, not ROLE_AGENT`);
  } else {
    const t = (r as { task: A2aTask }).task;
    const state = t.status?.state;
    if (state !== 'TASK_STATE_COMPLETED') throw new A2aCallError(`task ${state}`, `the task ended in ${state}, not TASK_STATE_COMPLETED: ${JSON.stringify(t).slice(0, 300)}`);
  }
  const said = agentText(r);
  if (!said.includes(want.text)) throw new A2aCallError('wrong answer text', `the answer does not contain ${JSON.stringify(want.text)}: ${JSON.stringify(said.slice(0, 200))}`);
  return shape;
}
