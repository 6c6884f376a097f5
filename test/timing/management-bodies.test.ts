import { monitorEventLoopDelay } from 'node:perf_hooks';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bystanderTenant, whileBystanderWaits } from '../helpers/bystander.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

/** The budget of the node's thread (DESIGN §5): no request of a stranger may hold it longer. */
const LOOP_MAX_MS = 50;
const BYSTANDER_MAX_MS = 100;
const MIB = 1024 * 1024;

/**
 * A management body of up to 1 MiB of small keys takes the node's thread 60-110 ms to parse. The credential of a route
 * is checked on arrival, before the body is read, so no one without one can make the node spend that.
 */
describe('management bodies of strangers are never parsed', () => {
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
});
