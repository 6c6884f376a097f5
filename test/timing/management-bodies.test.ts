import { monitorEventLoopDelay } from 'node:perf_hooks';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bystanderTenant, whileBystanderWaits } from '../helpers/bystander.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { INLINE_BYTES, MANAGEMENT_MAX_KEYS } from '../../edge/http/index.ts';

/** The budget of the node's thread (DESIGN §5): no request of a stranger may hold it longer. */
const LOOP_MAX_MS = 50;
const BYSTANDER_MAX_MS = 100;
const MIB = 1024 * 1024;

/**
 * A management body of up to 1 MiB of small keys takes the node's thread 60-110 ms to parse. The credential of a route
 * is checked on arrival, before the body is read, so no one without one can make the node spend that; a caller with
 * one has a body over 256 KiB parsed in the task pool, in its own lane, within the key limit (edge/management/json-bodies.ts).
 */
describe('management bodies within the loop budget', () => {
  let p: TestPlatform;
  let bystander: string;

  beforeAll(async () => {
    p = await startTestPlatform({ compileAhead: true });
    bystander = (await bystanderTenant(p)).key;
  }, 120_000);
  afterAll(() => p?.close());

  /** A skill to create, padded with as many small keys as fit in just under 1 MiB. */
  const manyKeys = () => {
    const keys: string[] = [];
    let size = 64;
    for (let i = 0; size + 16 < MIB; i++) {
      const k = `"k${i}":0`;
      keys.push(k);
      size += k.length + 1;
    }
    return `{"name":"s","description":"d","body":"b",${keys.join(',')}}`;
  };

  it('[MGMT-ERR-05] [MGMT-ERR-06] 1 MiB of small keys without a credential, or with an invalid one, is refused 403 before it is parsed, within the loop budget', { timeout: 120_000, retry: 2 }, async () => {
    const body = manyKeys();
    expect(body.length).toBeLessThanOrEqual(MIB);
    const post = async (headers: Record<string, string>) => {
      const res = await request(`${p.url}/v1/skills`, { method: 'POST', headers: { host: 'api.localhost', 'content-type': 'application/json', ...headers }, body });
      // The rest of a body refused before it was read is not read to its end: the connection closes.
      return [res.statusCode, ((await res.body.json()) as { code: string }).code, res.headers.connection];
    };
    await p.call('GET', '/v1/capabilities', { headers: { authorization: `Bearer ${bystander}` } });
    const delay = monitorEventLoopDelay({ resolution: 5 });
    delay.enable();
    const { result, latencies } = await whileBystanderWaits(p, bystander, async () => {
      const answers = [];
      for (let i = 0; i < 4; i++) answers.push(await post({}), await post({ authorization: 'Bearer ak-not-a-key' }));
      return answers;
    });
    delay.disable();
    if (process.env.HOSTILE_DEBUG) console.log('bystander worst', Math.max(...latencies).toFixed(1), 'ms; loop delay max', (delay.max / 1e6).toFixed(1), 'ms');
    expect(result).toEqual(Array.from({ length: 4 }, () => [[403, 'MGMT_CREDENTIAL_MISSING', 'close'], [403, 'MGMT_CREDENTIAL_MALFORMED', 'close']]).flat());
    // A request without a body keeps its connection.
    const bare = await request(`${p.url}/v1/skills`, { headers: { host: 'api.localhost' } });
    expect([bare.statusCode, bare.headers.connection]).toEqual([403, 'keep-alive']);
    await bare.body.dump();
    expect(Math.max(...latencies), 'bystander worst latency').toBeLessThan(BYSTANDER_MAX_MS);
    expect(delay.max / 1e6, 'event loop delay').toBeLessThan(LOOP_MAX_MS);
  });

  /** `{ "files": [...], "k0": "v…", … }`: `extra` keys beside a skill's files, their values padded to `pad` characters. */
  const skillWithKeys = (extra: number, pad: number, name = 'keys') => {
    const files = JSON.stringify([{ path: 'SKILL.md', content: `---\nname: ${name}\ndescription: d\n---\n\n# ${name}\n` }]);
    const value = JSON.stringify('v'.repeat(pad));
    const keys = Array.from({ length: extra }, (_, i) => `"k${i}":${value}`);
    return `{"files":${files}${keys.length ? ',' : ''}${keys.join(',')}}`;
  };

  it('[MGMT-ERR-03] [MGMT-ERR-04] a credentialed caller\'s large bodies are parsed off the loop: the key limit at both edges, prototype keys and bad JSON refused, a valid bundle created', { timeout: 120_000, retry: 2 }, async () => {
    const heavy = (await bystanderTenant(p)).key;
    const post = async (body: string) => {
      const res = await request(`${p.url}/v1/skills`, { method: 'POST', headers: { host: 'api.localhost', 'content-type': 'application/json', authorization: `Bearer ${heavy}` }, body });
      const json = (await res.body.json()) as { code?: string; message?: string; data?: { name: string } };
      return { status: res.statusCode, code: json.code, message: json.message, name: json.data?.name };
    };
    // Keys are counted in all: `files`, and the file's `path` and `content`, are three of them.
    const atLimit = (round: number) => skillWithKeys(MANAGEMENT_MAX_KEYS - 3, 30, `keys-${round}`);
    const pastLimit = skillWithKeys(MANAGEMENT_MAX_KEYS - 2, 30);
    const small = manyKeys();
    const poisoned = `{"files":[],"pad":${JSON.stringify('x'.repeat(INLINE_BYTES))},"__proto__":{"admin":true}}`;
    const text = 'line of text\n'.repeat(15_000);
    const valid = JSON.stringify({ files: [{ path: 'SKILL.md', content: `---\nname: big\ndescription: d\n---\n\n# big\n\n${text}` }, { path: 'notes.md', content: text }] });
    for (const body of [atLimit(0), pastLimit, small, poisoned, valid]) expect(body.length).toBeGreaterThan(INLINE_BYTES);
    await p.call('GET', '/v1/capabilities', { headers: { authorization: `Bearer ${bystander}` } });
    const delay = monitorEventLoopDelay({ resolution: 5 });
    delay.enable();
    const { result, latencies } = await whileBystanderWaits(p, bystander, async () => {
      const answers = [];
      for (let i = 0; i < 2; i++) answers.push(await post(atLimit(i)), await post(pastLimit), await post(small), await post(poisoned), await post('{"files":' + 'x'.repeat(INLINE_BYTES)));
      answers.push(await post(valid));
      return answers;
    });
    delay.disable();
    if (process.env.HOSTILE_DEBUG) console.log('bystander worst', Math.max(...latencies).toFixed(1), 'ms; loop delay max', (delay.max / 1e6).toFixed(1), 'ms');
    const refused = (message: string) => ({ status: 400, code: 'MGMT_INVALID_BODY', message, name: undefined });
    const round = (i: number) => [
      // Within the key limit the body reaches its schema, which drops the keys it has no room for: the skill is made.
      { status: 201, code: undefined, message: undefined, name: `keys-${i}` },
      refused(`invalid body: it holds more than ${MANAGEMENT_MAX_KEYS} object keys`),
      refused(`invalid body: it holds more than ${MANAGEMENT_MAX_KEYS} object keys`),
      refused('malformed request body: it has a __proto__ key, or a constructor holding a prototype key'),
      refused('malformed request body: the body is not valid JSON'),
    ];
    expect(result).toEqual([...round(0), ...round(1), { status: 201, code: undefined, message: undefined, name: 'big' }]);
    // The same key in a body parsed where it arrives is refused alike, and so is one in a constructor's prototype.
    const smallPoisoned = await post('{"files":[],"__proto__":{"admin":true}}');
    expect(smallPoisoned).toEqual(refused('malformed request body: it has a __proto__ key, or a constructor holding a prototype key'));
    expect(await post('{"files":[{"constructor":{"prototype":{"admin":true}}}]}')).toEqual(refused('malformed request body: it has a __proto__ key, or a constructor holding a prototype key'));
    // A key named constructor alone is data like any other (the schema, not the parser, has no room for it).
    expect((await post('{"files":[],"constructor":"x"}')).message).toBe('malformed request body: files must NOT have fewer than 1 items');
    expect(Math.max(...latencies), 'bystander worst latency').toBeLessThan(BYSTANDER_MAX_MS);
    expect(delay.max / 1e6, 'event loop delay').toBeLessThan(LOOP_MAX_MS);
  });
});
