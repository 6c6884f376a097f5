import { randomUUID } from 'node:crypto';
import { ClientFactory, DefaultAgentCardResolver, JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import { fetch as undiciFetch } from 'undici';
import { cliAgent } from '../../bin/cli/http-agent.ts';
import type { A2aBackend, A2aCallContext, StreamResponse, Task } from '../../edge/a2a/index.ts';
import { afterAll, beforeAll } from 'vitest';
import { startTestPlatform, type TestPlatform } from './platform.ts';

export const agentHost = (p: TestPlatform, handle = 'demo') => `agent-${handle}.${p.config.domain}`;
export const agentOrigin = (p: TestPlatform, handle = 'demo') => `http://${agentHost(p, handle)}:${p.port}`;
export const bearer = (credential: string) => ({ authorization: `Bearer ${credential}` });

/** The `data:` payloads of an SSE body, parsed. */
export const sseFrames = (text: string) =>
  text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      if (!block.startsWith('data: ') || block.includes('\n')) throw new Error(`not a one-line data frame: ${JSON.stringify(block)}`);
      return JSON.parse(block.slice(6));
    });

/** One JSON-RPC request to an agent gateway over raw HTTP (a string body is sent as is). */
export async function a2aCall(p: TestPlatform, body: unknown, opts: { headers?: Record<string, string>; handle?: string; path?: string } = {}) {
  const res = await p.call('POST', opts.path ?? '/', {
    host: agentHost(p, opts.handle),
    headers: { 'content-type': 'application/json', ...opts.headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const sse = String(res.headers['content-type'] ?? '').startsWith('text/event-stream');
  return { ...res, frames: sse ? sseFrames(res.text) : [] };
}

export const request = (method: string, params?: unknown, id: string | number = 1) => ({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) });

export const task = (id: string, state: Task['status']['state'] = 'TASK_STATE_COMPLETED', contextId = 'ctx-1'): Task => ({
  id,
  contextId,
  status: { state, timestamp: '2026-11-24T10:00:00.000Z' },
  artifacts: [],
});

export interface Recorded {
  method: string;
  params: unknown;
  ctx: Omit<A2aCallContext, 'signal'>;
  signal: AbortSignal;
}

/**
 * A backend that records what reaches it and answers with fixed, valid shapes; a test replaces any method. It is
 * the seam the agent runtime fills, so the surface is tested without a model behind it.
 */
export function recordingBackend(overrides: Partial<A2aBackend> = {}) {
  const calls: Recorded[] = [];
  const record = (method: string, params: unknown, ctx: A2aCallContext) => {
    const { signal, ...rest } = ctx;
    calls.push({ method, params, ctx: rest, signal });
  };
  const backend: A2aBackend = {
    async sendMessage(params, ctx) {
      record('sendMessage', params, ctx);
      return { task: task(params.message.taskId ?? 'task-1') };
    },
    async *sendStreamingMessage(params, ctx) {
      record('sendStreamingMessage', params, ctx);
      const t = task(params.message.taskId ?? 'task-1', 'TASK_STATE_WORKING');
      yield { task: t } satisfies StreamResponse;
      yield { statusUpdate: { taskId: t.id, contextId: t.contextId, status: { state: 'TASK_STATE_COMPLETED', timestamp: '2026-11-24T10:00:01.000Z' } } };
    },
    async getTask(params, ctx) {
      record('getTask', params, ctx);
      return task(params.id);
    },
    async listTasks(params, ctx) {
      record('listTasks', params, ctx);
      return { tasks: [], nextPageToken: '', pageSize: params.pageSize ?? 50, totalSize: 0 };
    },
    async cancelTask(params, ctx) {
      record('cancelTask', params, ctx);
      return task(params.id, 'TASK_STATE_CANCELED');
    },
    async *subscribeToTask(params, ctx) {
      record('subscribeToTask', params, ctx);
      yield { task: task(params.id, 'TASK_STATE_WORKING') };
      yield { statusUpdate: { taskId: params.id, contextId: 'ctx-1', status: { state: 'TASK_STATE_COMPLETED', timestamp: '2026-11-24T10:00:01.000Z' } } };
    },
    async createPushConfig(params, ctx) {
      record('createPushConfig', params, ctx);
      return { ...params, id: params.id ?? 'cfg-1' };
    },
    async getPushConfig(params, ctx) {
      record('getPushConfig', params, ctx);
      return { taskId: params.taskId, id: params.id, url: 'https://example.com/hook' };
    },
    async listPushConfigs(params, ctx) {
      record('listPushConfigs', params, ctx);
      return { configs: [], nextPageToken: '' };
    },
    async deletePushConfig(params, ctx) {
      record('deletePushConfig', params, ctx);
    },
    ...overrides,
  };
  return { backend, calls, last: () => calls.at(-1)! };
}

/** A fetch for the official client: `*.localhost` resolves to loopback, and `credential` goes as a bearer. */
export function sdkFetch(credential: string | null): typeof fetch {
  return ((url: string, init: RequestInit = {}) => {
    const headers = new Headers(init.headers);
    if (credential) headers.set('authorization', `Bearer ${credential}`);
    return undiciFetch(url, { ...(init as object), headers: Object.fromEntries(headers), dispatcher: cliAgent } as never);
  }) as unknown as typeof fetch;
}

/**
 * The official A2A 1.0 client (@a2a-js/sdk) for an agent of the test node: it resolves the card and talks JSON-RPC
 * through a dispatcher that resolves `*.localhost` to loopback, sending `credential` as a bearer.
 */
export async function sdkClient(p: TestPlatform, credential: string | null, handle = 'demo') {
  const fetchImpl = sdkFetch(credential);
  const factory = new ClientFactory({ transports: [new JsonRpcTransportFactory({ fetchImpl })], cardResolver: new DefaultAgentCardResolver({ fetchImpl }) });
  return factory.createFromUrl(agentOrigin(p, handle));
}

/**
 * A test node whose agent gateways answer from a recording backend, and the demo service principal's bearer header:
 * for suites about what reaches the runtime. Call it at the top of a describe block.
 */
export function withRecordingBackend(overrides: Partial<A2aBackend> = {}) {
  const rec = recordingBackend(overrides);
  const ctx = { rec, p: undefined as unknown as TestPlatform, auth: {} as Record<string, string> };
  beforeAll(async () => {
    ctx.p = await startTestPlatform({ a2aBackend: rec.backend });
    ctx.auth = bearer(ctx.p.node.demo!.serviceKey);
  });
  afterAll(() => ctx.p.close());
  return ctx;
}

/** The text of an A2A result as the official client returns it: a Task's artifacts, or a Message's parts. */
export const sdkText = (r: any): string => (r?.artifacts?.flatMap((a: any) => a.parts) ?? r?.parts ?? []).map((x: any) => (x.content?.$case === 'text' ? x.content.value : '')).join('');

/** SendMessage params for the official client: a user's text message with a fresh id, in a thread when given. */
export const sdkMessage = (text: string, contextId?: string) => ({ message: { messageId: randomUUID(), role: 1, parts: [{ content: { $case: 'text', value: text } }], ...(contextId ? { contextId } : {}) } }) as never;
