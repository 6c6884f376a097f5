import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { call, rulesFile, userMessage } from '../helpers/agents.ts';
import { MAX_MESSAGE_TEXT_BYTES } from '../../runtime/agents/run-start.ts';
import { png } from '../helpers/images.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

/** Attachments in agent runs: stored by hash with the thread, named to the model, refused before anything runs. */
describe('attachments in agent runs', () => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await startTestPlatform({ env: { PLATFORM_SCRIPTED_RULES: await rulesFile() } });
  });
  afterAll(() => p.close());

  it('[A2A-ATTACH-01] [A2A-ATTACH-03] a raw image is stored by hash and kept in the thread as a data part naming it', async () => {
    const image = png(640, 480);
    const m = userMessage('echo got it', { parts: [{ text: 'echo got it' }, { raw: image.toString('base64'), filename: 'shot.png', mediaType: 'image/png' }] });
    const t = (await call(p, 'SendMessage', { message: m, configuration: { returnImmediately: true } })).json.result.task;
    const done = await (async () => {
      for (let i = 0; i < 100; i++) {
        const r = (await call(p, 'GetTask', { id: t.id })).json.result;
        if (r.status.state === 'TASK_STATE_COMPLETED') return r;
        await new Promise((res) => setTimeout(res, 50));
      }
      throw new Error('task did not complete');
    })();
    expect(done.history[0].parts[1]).toEqual({ data: { attachment: { id: expect.stringMatching(/^[0-9a-f-]{36}$/), sha256: sha256(image), size: image.length, width: 640, height: 480 } }, filename: 'shot.png', mediaType: 'image/png' });
    expect(Buffer.from((await p.node.services.store.blobs.get(sha256(image)))!)).toEqual(image);
  });

  it('[A2A-ATTACH-03] an image over 4096 x 4096 is refused with -32602 before the run starts: nothing is written', async () => {
    const contextId = `img-${Date.now()}`;
    const res = await call(p, 'SendMessage', { message: userMessage('echo hi', { contextId, parts: [{ raw: png(4097, 10).toString('base64'), filename: 'wide.png', mediaType: 'image/png' }] }) });
    expect(res.json.error).toMatchObject({ code: -32602, message: expect.stringContaining('4096') });
    const ok = await call(p, 'SendMessage', { message: userMessage('echo fine', { contextId }) });
    expect(ok.json.result.message.parts[0].text).toBe('fine');
    const thread = (await call(p, 'ListTasks', { contextId })).json.result;
    expect(thread.totalSize).toBe(0);
  });

  it('[A2A-ATTACH-01] text and data parts share a 1 MiB cap per message (longer documents go as files): at the cap the run starts, one byte past it -32602 and nothing is written', async () => {
    const contextId = `text-${Date.now()}`;
    const data = { note: 'é'.repeat(1000) };
    // The cap counts UTF-8 bytes: the data part is its JSON, 'é' is two bytes.
    const rest = MAX_MESSAGE_TEXT_BYTES - Buffer.byteLength(JSON.stringify(data)) - 'echo '.length;
    const parts = (extra: number) => [{ text: `echo ${'x'.repeat(rest + extra)}` }, { data }];
    const over = await call(p, 'SendMessage', { message: userMessage('', { contextId, parts: parts(1) }) });
    expect(over.json.error).toMatchObject({ code: -32602, message: expect.stringContaining('more than 1048576 bytes (1 MiB)') });
    expect((await call(p, 'ListTasks', { contextId })).json.result.totalSize).toBe(0);
    const at = await call(p, 'SendMessage', { message: userMessage('', { contextId, parts: parts(0) }) });
    expect(at.json.error).toBeUndefined();
    // The scripted model echoes what follows `echo `: the text, then the data part as the model saw it.
    expect(at.json.result.message.parts[0].text.slice(0, rest + 1)).toBe(`${'x'.repeat(rest)}\n`);
  });
});
