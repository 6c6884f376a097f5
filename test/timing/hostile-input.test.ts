import { request, FormData } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { versionOutcome } from '../../runtime/index.ts';
import { bystanderTenant, whileBystanderWaits as bystanderTimes } from '../helpers/bystander.ts';
import { buildComponent, CALC_WAT, CALC_WIT } from '../helpers/components.ts';
import { mustRun } from '../helpers/env.ts';
import { npack } from '../helpers/npack.ts';
import { hostileUploads, type HostileUpload } from '../helpers/hostile-archives.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import type { DriverName } from '../helpers/store.ts';

/** The worst a bystander's request may take while another tenant sends hostile input (issue 9 §7). */
const BYSTANDER_MAX_MS = 100;

const drivers: DriverName[] = ['pglite', ...(mustRun('postgres') ? (['pg'] as const) : [])];

describe.each(drivers)('hostile uploads on %s do not stall the node', (driver) => {
  let p: TestPlatform;
  let attacker: string;
  let bystander: string;
  let hostile: HostileUpload[];

  beforeAll(async () => {
    p = await startTestPlatform({ driver, compileAhead: true });
    attacker = p.node.demo!.userKey;
    bystander = (await bystanderTenant(p)).key;
    hostile = await hostileUploads();
  }, 120_000);
  afterAll(() => p?.close());

  const upload = async (archive: Buffer, filename: string) => {
    const form = new FormData();
    form.append('archive', new Blob([archive]), filename);
    const res = await request(`${p.url}/v1/capabilities/upload`, { method: 'POST', headers: { host: 'api.localhost', authorization: `Bearer ${attacker}` }, body: form });
    return { status: res.statusCode, json: (await res.body.json()) as any };
  };

  /** Times another tenant's requests, one after another, until `work` settles; its result and their latencies. */
  const whileBystanderWaits = <T>(work: () => Promise<T>) => bystanderTimes(p, bystander, work);

  // Up to two retries: on a small shared machine the OS or the database server can delay one request by a scheduler
  // slice now and then; a stall that the hostile input causes (the seconds this test was written against) fails every
  // attempt.
  it('[UPLOAD-14] [UPLOAD-30] each hostile upload gets its answer while a bystander tenant is served within 100 ms', { timeout: 240_000, retry: 2 }, async () => {
    // Warm the paths first with an ordinary upload and the bystander's request (threads starting, first statements
    // planned, code compiled): what is timed is the hostile work, not a node's first upload.
    await p.call('GET', '/v1/capabilities', { headers: { authorization: `Bearer ${bystander}` } });
    const warm = await upload(await npack([{ name: 'calc.wasm', body: Buffer.from(await buildComponent({ wit: CALC_WIT, world: 'calc', wat: CALC_WAT })) }]), 'warm.npack');
    expect(warm.status).toBe(200);
    await versionOutcome(p.node.services, { accountId: p.node.demo!.accountId, capabilityId: warm.json.data.capability_id, version: warm.json.data.version });
    for (const h of hostile) {
      const { result, latencies, loopDelayMaxMs } = await whileBystanderWaits(async () => {
        const res = await upload(h.archive, `${h.name}.npack`);
        // An admitted upload activates by itself: the transpile of its (large) component is timed too.
        if (res.status === 200) {
          const outcome = await versionOutcome(p.node.services, { accountId: p.node.demo!.accountId, capabilityId: res.json.data.capability_id, version: res.json.data.version });
          return { ...res, outcome: outcome.state };
        }
        return { ...res, outcome: null };
      });
      if (process.env.HOSTILE_DEBUG) console.log(h.name, result.status, Math.max(...latencies).toFixed(1), loopDelayMaxMs.toFixed(1), latencies.length);
      expect(result.status, `${h.name}: ${JSON.stringify(result.json)}`).toBe(h.expect);
      if (h.expect === 200) expect(result.outcome, h.name).toBe('active');
      expect(latencies.length, `${h.name}: the bystander was served during the upload`).toBeGreaterThan(0);
      expect(Math.max(...latencies), `${h.name}: bystander worst latency`).toBeLessThan(BYSTANDER_MAX_MS);
      expect(loopDelayMaxMs, `${h.name}: event loop delay`).toBeLessThan(BYSTANDER_MAX_MS);
    }
  });

  it('[UPLOAD-14] a refused upload says why: the per-kind cap, the decompression cap, the config problems', async () => {
    const by = Object.fromEntries(hostile.map((h) => [h.name, h]));
    const yaml = await upload(by['yaml-300k-items']!.archive, 'y.npack');
    expect(yaml.json.code).toBe('PLUGIN_ARCHIVE_ENTRY_TOO_LARGE');
    expect(yaml.json.message).toMatch(/platform\.yaml is larger than 64 KiB/);
    const bomb = await upload(by['gzip-bomb']!.archive, 'b.npack');
    expect(bomb.json.code).toBe('PLUGIN_ARCHIVE_TOO_LARGE');
    const list = await upload(by['yaml-long-list-at-cap']!.archive, 'l.npack');
    expect(list.json.code).toBe('PLUGIN_CONFIG_INVALID');
    expect(list.json.message).toMatch(/\/metadata\/tags: must NOT have more than 32 items/);
  });

  it('stores a large component whole, never as one statement, and serves it', async () => {
    const big = hostile.find((h) => h.name === 'large-custom-section')!;
    const res = await upload(big.archive, 'big.npack');
    expect(res.status).toBe(200);
    const rows = await p.node.services.store.capabilities.versionArtifacts(p.node.demo!.accountId, res.json.data.capability_id, res.json.data.version);
    const wasm = await p.node.services.store.blobs.get(rows!.wasmHash);
    expect(wasm!.length).toBeGreaterThan(28 * 1024 * 1024);
  }, 120_000);
});
