import { afterAll, describe, expect, it, vi } from 'vitest';
import { a2aLoadClient, check, type SendResult } from '../../bench/a2a-client.ts';
import { startReference } from '../../bench/a2a-reference.ts';
import { REPLY_PROMPT, REPLY_TEXT, TASK_PROMPT, TASK_TEXT } from '../../bench/scenarios/a2a-send.ts';

const message = (text: string, role = 'ROLE_AGENT'): SendResult => ({ message: { messageId: 'm', role, parts: [{ text }] } });
const task = (state: string, text: string): SendResult => ({
  task: { id: 't', contextId: 'c', status: { state }, artifacts: [{ parts: [{ text }] }] },
});

describe('a2a-send answer checks', () => {
  it('accepts the right shape with the right text, and says what is wrong otherwise', () => {
    expect(check(message('hello from the bench'), { shape: 'message', text: 'hello from the bench' })).toBe('message');
    expect(check(task('TASK_STATE_COMPLETED', 'The sum is 42.'), { shape: 'task', text: 'The sum is 42.' })).toBe('task');
    expect(check(task('TASK_STATE_COMPLETED', 'hi'), { shape: 'either', text: 'hi' })).toBe('task');
    expect(() => check(message('hi'), { shape: 'task', text: 'hi' })).toThrow(expect.objectContaining({ code: 'a message, not a task' }));
    expect(() => check(task('TASK_STATE_FAILED', 'The sum is 42.'), { shape: 'task', text: 'The sum is 42.' })).toThrow(expect.objectContaining({ code: 'task TASK_STATE_FAILED' }));
    expect(() => check(message('nonsense'), { shape: 'message', text: 'hi' })).toThrow(expect.objectContaining({ code: 'wrong answer text' }));
    expect(() => check(message('hi', 'ROLE_USER'), { shape: 'message', text: 'hi' })).toThrow(expect.objectContaining({ code: 'message role ROLE_USER' }));
    expect(() => check({} as SendResult, { shape: 'either', text: 'hi' })).toThrow(expect.objectContaining({ code: 'neither message nor task' }));
  });

  it("finds a task's answer in its status message or agent history too", () => {
    const r: SendResult = {
      task: { id: 't', contextId: 'c', status: { state: 'TASK_STATE_COMPLETED', message: { messageId: 'm', role: 'ROLE_AGENT', parts: [{ text: 'The sum is 42.' }] } } },
    };
    expect(check(r, { shape: 'task', text: 'The sum is 42.' })).toBe('task');
  });
});

describe('a2a-send reference (@a2a-js/sdk server)', () => {
  const closers: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const c of closers.reverse()) await c();
  });

  async function reference(mode: 'reply' | 'task') {
    const ref = await startReference({ mode, store: 'memory' });
    const client = a2aLoadClient({ origin: ref.url, host: new URL(ref.url).host }, 2);
    closers.push(() => ref.close(), () => client.close());
    return { ref, client };
  }

  it('answers the bare-reply prompt with one agent Message, and serves its card', async () => {
    const { ref, client } = await reference('reply');
    expect(ref.store).toBe('memory');
    const card = await client.card();
    expect(card.status).toBe(200);
    expect(card.body.supportedInterfaces[0]).toMatchObject({ url: ref.url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' });
    const r = await client.send(REPLY_PROMPT);
    expect(check(r, { shape: 'message', text: REPLY_TEXT })).toBe('message');
  });

  it('answers the task prompt with a completed Task holding the answer as an artifact', async () => {
    const { client } = await reference('task');
    const r = await client.send(TASK_PROMPT);
    expect(check(r, { shape: 'task', text: TASK_TEXT })).toBe('task');
    expect('task' in r && r.task.artifacts?.[0]?.parts[0]?.text).toBe(TASK_TEXT);
  });

  it('falls back to the in-memory store, saying why, when the database store cannot be built', async () => {
    let kysely = true;
    try {
      await import('kysely' as string);
    } catch {
      kysely = false;
    }
    if (kysely) return;
    const ref = await startReference({ mode: 'task', store: 'database', databaseUrl: 'postgres://nobody@127.0.0.1:1/none' });
    closers.push(() => ref.close());
    expect(ref.store).toBe('memory');
    expect(ref.storeNote).toMatch(/"kysely" package/);
  });

  it('reports a JSON-RPC error as an error with its code', async () => {
    const { ref } = await reference('reply');
    // The SDK refuses a request without A2A-Version (it means 0.3) with -32009.
    const client = a2aLoadClient({ origin: ref.url, host: new URL(ref.url).host, headers: { 'a2a-version': '0.3' } }, 1);
    closers.push(() => client.close());
    // The SDK logs the refusal on stderr; the test only wants its answer.
    const quiet = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      await expect(client.send(REPLY_PROMPT)).rejects.toMatchObject({ code: expect.stringMatching(/^JSON-RPC -32009/) });
    } finally {
      quiet.mockRestore();
    }
  });
});
