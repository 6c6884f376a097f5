import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGUI_BODY_LIMIT } from '../../edge/a2a/agui-input.ts';
import { MAX_MESSAGE_TEXT_BYTES } from '../../runtime/agents/run-start.ts';
import { agentHost, bearer } from '../helpers/a2a.ts';
import { bindCalc, rulesFile } from '../helpers/agents.ts';
import { bystanderTenant, whileBystanderWaits } from '../helpers/bystander.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

/** The worst a bystander's request may take while another tenant sends hostile AG-UI run input. */
const BYSTANDER_MAX_MS = 100;

const run = (extra: Record<string, unknown>, content: string = 'echo hi') =>
  JSON.stringify({ threadId: `t-${Math.random()}`, runId: 'r-1', state: {}, tools: [], context: [], forwardedProps: {}, messages: [{ id: `m-${Math.random()}`, role: 'user', content }], ...extra });

/** Every kind of input the AG-UI route must refuse or serve quickly: at and past the caps, nested, NUL, bad UTF-8. */
function hostileBodies(): { name: string; body: Buffer }[] {
  const deep = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
  const atCap = (b: string) => Buffer.from(b.padEnd(AGUI_BODY_LIMIT, ' '));
  const file = (bytes: number) => [{ type: 'document', source: { type: 'data', value: Buffer.alloc(bytes, 7).toString('base64'), mimeType: 'application/octet-stream' }, metadata: { filename: 'big.bin' } }];
  return [
    // Not an echo: the hostile part is the input, which is stored, sent to the model and read by its rules. The
    // model's answer is the model's, bounded by its output limit (a real model's is far below 1 MiB): here the
    // scripted model's short answer to a message no rule matches.
    { name: 'text at the 1 MiB cap', body: Buffer.from(run({}, `say ${'x'.repeat(MAX_MESSAGE_TEXT_BYTES - 4)}`)) },
    { name: 'text one byte past the 1 MiB cap', body: Buffer.from(run({}, `echo ${'x'.repeat(MAX_MESSAGE_TEXT_BYTES - 4)}`)) },
    { name: 'a 5.5 MiB file inline, the body near its cap', body: atCap(run({ messages: [{ id: `m-${Math.random()}`, role: 'user', content: file(5.5 * 1024 * 1024) }] })) },
    { name: 'one byte past the body cap', body: Buffer.alloc(AGUI_BODY_LIMIT + 1, 0x20) },
    { name: 'forwardedProps nested 500 000 deep', body: Buffer.from(run({}).replace('"forwardedProps":{}', `"forwardedProps":{"x":${deep(500_000)}}`)) },
    { name: '100 000 messages', body: Buffer.from(run({ messages: Array.from({ length: 100_000 }, (_, i) => ({ id: `m${i}`, role: 'user', content: 'a' })) })) },
    { name: 'NUL bytes in the content', body: Buffer.from(run({}, `echo \u0000${'\u0000'.repeat(100_000)}`)) },
    { name: 'invalid UTF-8', body: Buffer.concat([Buffer.from(`{"threadId":"t-${Math.random()}","runId":"r","messages":[{"id":"m-${Math.random()}","role":"user","content":"`), Buffer.alloc(100_000, 0xff), Buffer.from('"}]}')]) },
    { name: 'not JSON at all, 8 MiB of braces', body: Buffer.alloc(AGUI_BODY_LIMIT, 0x7b) },
  ];
}

describe('hostile AG-UI run input does not stall the node', () => {
  let p: TestPlatform;
  let bystander: string;

  beforeAll(async () => {
    p = await startTestPlatform({ env: { PLATFORM_SCRIPTED_RULES: await rulesFile() }, compileAhead: true });
    await bindCalc(p);
    bystander = (await bystanderTenant(p)).key;
  }, 120_000);
  afterAll(() => p?.close());

  const post = async (body: Buffer) => {
    const res = await request(`${p.url}/agui`, { method: 'POST', headers: { host: agentHost(p), 'content-type': 'application/json', accept: 'text/event-stream', ...bearer(p.node.demo!.serviceKey) }, body });
    const text = await res.body.text();
    return { status: res.statusCode, text };
  };

  // Retries as in hostile-input.test.ts: a shared machine's scheduler can delay one request now and then; a stall the
  // input causes fails every attempt.
  it('[A2A-RPC-03] each hostile body gets a clear answer (never a 500) while a bystander tenant is served within 100 ms', { timeout: 240_000, retry: 2 }, async () => {
    const bodies = hostileBodies().filter((b) => !process.env.HOSTILE_ONLY || b.name.includes(process.env.HOSTILE_ONLY));
    await p.call('GET', '/v1/capabilities', { headers: { authorization: `Bearer ${bystander}` } });
    expect((await post(Buffer.from(run({})))).status).toBe(200);
    const { result, latencies, loopDelayMaxMs } = await whileBystanderWaits(p, bystander, async () => {
      const answers: { name: string; status: number; text: string }[] = [];
      for (const b of bodies) answers.push({ name: b.name, ...(await post(b.body)) });
      return answers;
    });
    if (process.env.HOSTILE_DEBUG) console.log('bystander worst', Math.max(...latencies).toFixed(1), 'ms; loop delay max', loopDelayMaxMs.toFixed(1), 'ms;', result.map((r) => `${r.name}: ${r.status} ${r.status === 200 ? '' : r.text.slice(0, 300)}`).join('; '));
    const status = Object.fromEntries(result.map((r) => [r.name, r.status]));
    expect(status).toEqual({
      'text at the 1 MiB cap': 200,
      'text one byte past the 1 MiB cap': 400,
      'a 5.5 MiB file inline, the body near its cap': 200,
      'one byte past the body cap': 413,
      'forwardedProps nested 500 000 deep': 400,
      '100 000 messages': 400,
      'NUL bytes in the content': 400,
      // JSON bodies are decoded leniently: a byte that is no UTF-8 reads as U+FFFD, which the thread can keep.
      'invalid UTF-8': 200,
      'not JSON at all, 8 MiB of braces': 400,
    });
    const code = Object.fromEntries(result.filter((r) => r.status !== 200).map((r) => [r.name, (JSON.parse(r.text) as { code: string }).code]));
    expect(code).toEqual({
      'text one byte past the 1 MiB cap': 'A2A_MESSAGE_TOO_LARGE',
      'one byte past the body cap': 'AGUI_BODY_TOO_LARGE',
      'forwardedProps nested 500 000 deep': 'A2A_INVALID_REQUEST',
      '100 000 messages': 'A2A_INVALID_REQUEST',
      'NUL bytes in the content': 'PLT_INVALID_TEXT',
      'not JSON at all, 8 MiB of braces': 'A2A_PARSE_ERROR',
    });
    // A run that was served ended as a run does: RUN_FINISHED or RUN_ERROR, never a dropped stream.
    for (const r of result.filter((x) => x.status === 200)) expect(r.text).toMatch(/"type":"RUN_(FINISHED|ERROR)"/);
    expect(latencies.length, 'the bystander was served meanwhile').toBeGreaterThan(3);
    expect(Math.max(...latencies), 'bystander worst latency').toBeLessThan(BYSTANDER_MAX_MS);
    expect(loopDelayMaxMs, 'event loop delay').toBeLessThan(BYSTANDER_MAX_MS);
  });
});
