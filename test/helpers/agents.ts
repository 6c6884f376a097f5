import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { request as undiciRequest } from 'undici';
import { parseRules, serveScripted } from '../../runtime/index.ts';
import { a2aCall, bearer, request } from './a2a.ts';
import { callerOf, installPlugin } from './mcp.ts';
import type { TestPlatform } from './platform.ts';

/**
 * Rules of the scripted model for agent tests (named `demo`, so the seeded demo agent runs on them): a bare reply, a
 * tool call, a chunked answer after a tool, a tool that never returns, a loop of tool calls, and a slow answer.
 */
export const AGENT_TEST_RULES = `name: demo
rules:
  - when: { contains: loop, tool: calc_add }
    call: { tool: calc_add, arguments: { a: 1, b: 1 } }
  - when: { after_tool: calc_add }
    reply: "The sum is {{result}}."
    chunk: 1
  - when: { after_tool: true }
    reply: "The tool answered: {{result}}"
  - when: { any: [add, sum, plus], numbers: 2, tool: calc_add }
    call: { tool: calc_add, arguments: { a: "{{number.1}}", b: "{{number.2}}" } }
  - when: { contains: spin, tool: calc_spin }
    call: { tool: calc_spin, arguments: {} }
  - when: { contains: slow }
    reply: "one two three four five six seven eight nine ten"
    delay_ms: 300
  - when: { contains: echo }
    reply: "{{after:echo}}"
  - reply: "plain answer"
`;

/** Rules of the scripted model that schedule a reminder (the Scheduler built-in) and answer the reminder's run. */
export const SCHEDULER_RULES = `name: demo
rules:
  - when: { after_tool: schedule_run }
    reply: "Scheduled: {{result}}"
  - when: { contains: remind me in, tool: schedule_run }
    call: { tool: schedule_run, arguments: { message: "reminder: {{after:to}}", delay_seconds: "{{number.1}}" } }
  - when: { contains: "reminder:" }
    reply: "Reminder sent"
  - reply: "plain answer"
`;

/** A rules file for PLATFORM_SCRIPTED_RULES. */
export async function rulesFile(text = AGENT_TEST_RULES): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'rules-'));
  const file = path.join(dir, 'rules.yaml');
  await writeFile(file, text);
  return file;
}

/** Installs the calc test plugin (`calc_add`, `calc_greet`, `calc_spin`) in the demo account and binds it to the demo agent. */
export async function bindCalc(p: TestPlatform): Promise<string> {
  const caller = await callerOf(p, p.node.demo!.serviceKey);
  const capability = await installPlugin(p, caller, { name: 'calc' });
  await p.node.services.admin.bindAgent({ agent: 'demo', capability });
  return capability;
}

/** A second service principal of the demo account with its own key: another caller of the same agent. */
export async function otherCaller(p: TestPlatform, role = 'member'): Promise<string> {
  const principal = await p.node.services.admin.createPrincipal({ account: p.node.demo!.accountId, name: `other-${Math.random().toString(36).slice(2, 8)}`, role });
  return (await p.node.services.admin.createKey({ principal: principal.id })).key;
}

let messages = 0;
/** A user message with a fresh id. */
export const userMessage = (text: string, extra: Record<string, unknown> = {}) => ({ messageId: `m-${++messages}-${Date.now()}`, role: 'ROLE_USER', parts: [{ text }], ...extra });

/** SendMessage over raw HTTP as the demo service principal (or `key`); the parsed envelope. */
export async function send(p: TestPlatform, text: string, opts: { key?: string; message?: Record<string, unknown>; configuration?: Record<string, unknown>; method?: string } = {}) {
  const params = { message: userMessage(text, opts.message), ...(opts.configuration ? { configuration: opts.configuration } : {}) };
  return a2aCall(p, request(opts.method ?? 'SendMessage', params), { headers: bearer(opts.key ?? p.node.demo!.serviceKey) });
}

/** One raw JSON-RPC call as the demo service principal (or `key`). */
export const call = (p: TestPlatform, method: string, params: unknown, key?: string) => a2aCall(p, request(method, params), { headers: bearer(key ?? p.node.demo!.serviceKey) });

/**
 * A model provider that records every chat completion request and answers it with the scripted model: the
 * OpenAI-compatible wire both ways, so a test sees exactly what the agent loop sent the model. A request whose body
 * contains `opts.holdWhen` is held, unanswered, until `release()`: a model that takes as long as the test wants.
 */
export async function recordingModel(rules = AGENT_TEST_RULES, opts: { holdWhen?: string } = {}) {
  const scripted = await serveScripted(parseRules(rules));
  const requests: { messages: { role: string; content: unknown; tool_calls?: unknown }[]; tools?: unknown[]; model: string }[] = [];
  let held = 0;
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const body = async (req: IncomingMessage) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  };
  const server = createServer((req, res) => {
    void body(req).then(async (text) => {
      requests.push(JSON.parse(text));
      if (opts.holdWhen !== undefined && text.includes(opts.holdWhen)) {
        held++;
        await released;
        held--;
      }
      const upstream = await undiciRequest(`${scripted.baseUrl}${(req.url ?? '').replace(/^\/v1/, '')}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: text });
      res.writeHead(upstream.statusCode, { 'content-type': String(upstream.headers['content-type'] ?? 'application/json') });
      for await (const c of upstream.body) res.write(c);
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    /** Requests held now. */
    held: () => held,
    release: () => release(),
    async close() {
      release();
      await new Promise((r) => server.close(r));
      await scripted.close();
    },
  };
}

/** Polls until `check` returns a value other than undefined (or fails after `ms`). */
export async function eventually<T>(check: () => Promise<T | undefined>, ms = 10_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}
