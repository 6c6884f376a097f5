import { EXTENSIONS } from '../../edge/a2a/card.ts';
import { describe, expect, it } from 'vitest';
import { request as undiciRequest } from 'undici';
import type { A2aCallContext } from '../../edge/index.ts';
import { PlatformError } from '../../runtime/index.ts';
import { agentHost, task, withRecordingBackend } from '../helpers/a2a.ts';

/** The AG-UI route over a recording backend: what reaches the runtime, and failures the runtime raises mid-run. */
describe('the AG-UI route and the runtime seam (A2A-RPC-03)', () => {
  let fail = false;
  let sent: { params: unknown; ctx: A2aCallContext } | null = null;
  const node = withRecordingBackend({
    async *sendStreamingMessage(params, ctx) {
      sent = { params, ctx };
      const p = params as { message: { contextId?: string } };
      yield { task: task('t-9', 'TASK_STATE_WORKING', p.message.contextId) };
      if (fail) throw new PlatformError('MODEL_FAILED', 'the model broke mid-run');
      yield { statusUpdate: { taskId: 't-9', contextId: p.message.contextId!, status: { state: 'TASK_STATE_COMPLETED', timestamp: '2026-11-24T10:00:00.000Z' } } };
    },
  });

  async function post(body: unknown) {
    const res = await undiciRequest(`${node.p.url}/agui`, { method: 'POST', headers: { host: agentHost(node.p), 'content-type': 'application/json', ...node.auth }, body: JSON.stringify(body) });
    const text = await res.body.text();
    return { status: res.statusCode, events: text.split('\n\n').filter(Boolean).map((f) => JSON.parse(f.replace(/^data: /, ''))) };
  }

  it('[A2A-RPC-03] the run sends its last user message in the thread threadId, as the caller; earlier messages are not sent', async () => {
    fail = false;
    const res = await post({
      threadId: 'thread-7',
      runId: 'run-7',
      messages: [
        { id: 'u1', role: 'user', content: 'first' },
        { id: 'a1', role: 'assistant', content: 'answer' },
        { id: 'u2', role: 'user', content: [{ type: 'text', text: 'second' }, { type: 'image', source: { type: 'url', value: 'https://example.com/a.png', mimeType: 'image/png' } }] },
        { id: 'a2', role: 'assistant', content: 'thinking' },
      ],
    });
    expect(res.status).toBe(200);
    expect(sent!.params).toEqual({
      message: { messageId: 'u2', role: 'ROLE_USER', contextId: 'thread-7', parts: [{ text: 'second' }, { url: 'https://example.com/a.png', mediaType: 'image/png' }] },
    });
    // AG-UI negotiates no extension; forms reach it whole, as interrupts, so the runtime's answers are read as with A2UI.
    expect(sent!.ctx).toMatchObject({ accountId: node.p.node.demo!.accountId, via: 'api_key', extensions: [EXTENSIONS.a2ui] });
    // A backend without streamRun still serves AG-UI (without tool events).
    expect(res.events.map((e) => e.type)).toEqual(['RUN_STARTED', 'RUN_FINISHED']);
    expect(res.events.at(-1)).toEqual({ type: 'RUN_FINISHED', threadId: 'thread-7', runId: 'run-7', outcome: { type: 'success' }, result: { taskId: 't-9', contextId: 'thread-7', state: 'TASK_STATE_COMPLETED' } });
  });

  it('[A2A-RPC-03] a failure after the stream started is RUN_ERROR with its code and message, and the stream ends', async () => {
    fail = true;
    const res = await post({ threadId: 'thread-8', runId: 'run-8', messages: [{ id: 'u1', role: 'user', content: 'hi' }] });
    expect(res.status).toBe(200);
    expect(res.events).toEqual([
      { type: 'RUN_STARTED', threadId: 'thread-8', runId: 'run-8' },
      { type: 'RUN_ERROR', message: 'the model broke mid-run', code: 'MODEL_FAILED' },
    ]);
  });

  it('[A2A-RPC-03] a file part from a source the platform cannot read is 400 naming the part', async () => {
    const res = await undiciRequest(`${node.p.url}/ag-ui`, {
      method: 'POST',
      headers: { host: agentHost(node.p), 'content-type': 'application/json', ...node.auth },
      body: JSON.stringify({ threadId: 't', runId: 'r', messages: [{ id: 'u1', role: 'user', content: [{ type: 'document', source: { type: 'file', value: 'file-123' } }] }] }),
    });
    expect(res.statusCode).toBe(400);
    expect(await res.body.json()).toMatchObject({ code: 'AGUI_INVALID_INPUT', message: expect.stringContaining('messages.0.content.0.source') });
  });
});
