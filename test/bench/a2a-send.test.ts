import { afterAll, describe, expect, it, vi } from 'vitest';
import { readFile } from 'node:fs/promises';
import { a2aLoadClient, agentText, check, type SendResult } from '../../bench/a2a-client.ts';
import { startReference } from '../../bench/a2a-reference.ts';
import { scope } from '../../bench/cleanup.ts';
import { privateDatabase } from '../../bench/cluster.ts';
import { REPLY_PROMPT, REPLY_TEXT, TASK_PROMPT, TASK_TEXT } from '../../bench/scenarios/a2a-send.ts';
import { DEMO_RULES_FILE, parseRules, serveScripted } from '../../runtime/index.ts';
import { DATABASE_URL, mustRun } from '../helpers/env.ts';

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

  async function reference(mode: 'reply' | 'task', executor: 'trivial' | 'model' = 'trivial') {
    const ref = await startReference({ mode, store: 'memory', executor });
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

  it("model executor: answers the bare-reply prompt with the scripted model's text as one agent Message", async () => {
    const { ref, client } = await reference('reply', 'model');
    expect(ref.executor).toBe('model');
    const card = await client.card();
    expect(card.body.name).toBe('Bench reference (model, reply)');
    expect(check(await client.send(REPLY_PROMPT), { shape: 'message', text: REPLY_TEXT })).toBe('message');
    // The text is the model's, not a canned one: another message gets another answer.
    const other = await client.send('echo something else entirely');
    expect(check(other, { shape: 'message', text: 'something else entirely' })).toBe('message');
    expect('message' in other && other.message.parts.map((p) => p.text).join('')).toBe('something else entirely');
  });

  it('model executor: runs the task prompt through the model and calc_add to a completed Task with the answer as an artifact', async () => {
    const { client } = await reference('task', 'model');
    const r = await client.send(TASK_PROMPT);
    expect(check(r, { shape: 'task', text: TASK_TEXT })).toBe('task');
    expect('task' in r && r.task.artifacts?.[0]?.parts[0]?.text).toBe(TASK_TEXT);
    expect('task' in r && r.task.history?.[0]).toMatchObject({ role: 'ROLE_USER', parts: [{ text: TASK_PROMPT }] });
    // The sum is the tool's: other numbers, another sum.
    const other = await client.send('add 19 and 23000');
    expect(check(other, { shape: 'task', text: 'The sum is 23019.' })).toBe('task');
  });

  it('model executor with a model URL: calls the model process it is given, and serves no model of its own', async () => {
    const model = await serveScripted(parseRules(await readFile(DEMO_RULES_FILE, 'utf8')));
    let open = true;
    closers.push(async () => {
      if (open) await model.close();
    });
    const ref = await startReference({ mode: 'reply', store: 'memory', executor: 'model', modelUrl: model.baseUrl });
    const client = a2aLoadClient({ origin: ref.url, host: new URL(ref.url).host }, 1);
    closers.push(() => ref.close(), () => client.close());
    expect(check(await client.send(REPLY_PROMPT), { shape: 'message', text: REPLY_TEXT })).toBe('message');
    // With the model process gone, the reference has nothing else to ask: the SDK answers the executor's error, which
    // names the refused connection to that model's port.
    await model.close();
    open = false;
    const quiet = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      const r = await client.send(REPLY_PROMPT).catch((err: Error) => err);
      expect(r instanceof Error ? r.message : agentText(r)).toContain(`Cannot connect to API: connect ECONNREFUSED ${new URL(model.baseUrl).host}`);
    } finally {
      quiet.mockRestore();
    }
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

describe.skipIf(!mustRun('postgres'))("a2a-send model reference on the SDK's DatabaseTaskStore (PostgreSQL)", () => {
  const s = scope();
  afterAll(() => s.close());

  it('keeps the completed task in PostgreSQL: GetTask answers it after the SendMessage', async () => {
    const ref = await startReference({ mode: 'task', store: 'database', executor: 'model', databaseUrl: await privateDatabase(s, DATABASE_URL!) });
    s.defer('stop the reference', () => ref.close());
    expect(ref.store).toBe('database');
    const client = a2aLoadClient({ origin: ref.url, host: new URL(ref.url).host }, 1);
    s.defer('close the client', () => client.close());
    const r = await client.send(TASK_PROMPT);
    expect(check(r, { shape: 'task', text: TASK_TEXT })).toBe('task');
    const id = 'task' in r ? r.task.id : '';
    const res = await fetch(ref.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id } }),
    });
    const got = (await res.json()) as { result?: { id: string; status: { state: string }; artifacts?: { parts: { text?: string }[] }[] } };
    expect(got.result).toMatchObject({ id, status: { state: 'TASK_STATE_COMPLETED' }, artifacts: [{ parts: [{ text: TASK_TEXT }] }] });
  });
});
