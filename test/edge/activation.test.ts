import { request, FormData } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pluginVersionAddress } from '../../runtime/index.ts';
import { buildComponent, CALC_WAT, CALC_WIT } from '../helpers/components.ts';
import { npack } from '../helpers/npack.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

// Needs 10 pages (640 KiB) of memory at start: activation under a 64Ki limit must fail.
const HUNGRY_WAT = CALC_WAT.replace('(memory (export "memory") 1)', '(memory (export "memory") 10)');

describe('plugin version activation', () => {
  let p: TestPlatform;
  let key: string;
  let capabilityId: string;
  const auth = () => ({ authorization: `Bearer ${key}` });
  const upload = async (wat: string, memory: string) => {
    const wasm = await buildComponent({ wit: CALC_WIT, world: 'calc', wat });
    const form = new FormData();
    form.append('archive', new Blob([await npack([{ name: 'calc.wasm', body: Buffer.from(wasm) }, { name: 'platform.yaml', body: `schema_version: "1.0"\nmetadata: { name: acalc }\nresources: { limits: { memory: ${memory} } }` }])]), 'acalc.npack');
    const res = await request(`${p.url}/v1/capabilities/upload`, { method: 'POST', headers: { host: 'api.localhost', ...auth() }, body: form });
    return (await res.body.json()) as { data: { capability_id: string; version: number } };
  };
  const activate = (id: string, version: number | string, headers: Record<string, string> = auth()) =>
    p.call('POST', `/v1/capabilities/${id}/versions/${version}/activate`, { headers });
  const capability = async () => (await p.call('GET', '/v1/capabilities?namespace=acalc', { headers: auth() })).json.data.capabilities[0];
  const stateOf = async (version: number) => (await p.node.services.actors.read(pluginVersionAddress(p.node.demo!.accountId, capabilityId, version)))!;

  beforeAll(async () => {
    p = await startTestPlatform();
    key = p.node.demo!.userKey;
  }, 60_000);
  afterAll(() => p.close());

  it('[PLUGIN-01] [PLUGIN-02] [PLUGIN-05] activation stores the artifacts by hash and flips active_version to the version', async () => {
    const up = await upload(CALC_WAT, '64Mi');
    capabilityId = up.data.capability_id;
    expect((await capability()).active_version).toBe(0);
    const res = await activate(capabilityId, 1);
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ data: { capability_id: capabilityId, active_version: 1 } });
    const cap = await capability();
    expect(cap).toMatchObject({ active_version: 1, is_active: true, specifications: { active_version: 1 } });
    expect((await stateOf(1)).value).toBe('active');
    const { rows } = await p.node.services.store.db.query<{ artifact_hash: string }>('select artifact_hash from capability_versions where capability_id = $1 and version_number = 1', [capabilityId]);
    const manifest = JSON.parse((await p.node.services.store.capabilities.getBlob(rows[0]!.artifact_hash))!.toString()) as Record<string, string>;
    expect(Object.keys(manifest)).toEqual(expect.arrayContaining(['plugin.js', 'plugin.core.wasm']));
    for (const hash of Object.values(manifest)) expect(await p.node.services.store.capabilities.getBlob(hash)).not.toBeNull();
  });

  it('[PLUGIN-03] a failed activation leaves the version dormant and the previous version serving', async () => {
    const up = await upload(HUNGRY_WAT, '64Ki');
    expect(up.data.version).toBe(2);
    const res = await activate(capabilityId, 2);
    expect(res.status).toBe(400);
    expect(res.json.code).toBe('MGMT_ACTIVATION_FAILED');
    expect(res.json.message).toMatch(/needs 10 pages of memory at start, above the plugin's limit of 1/);
    expect((await capability()).active_version).toBe(1);
    const v2 = await stateOf(2);
    expect(v2.value).toBe('dormant');
    expect(v2.context).toMatchObject({ lastError: expect.stringMatching(/10 pages/) });
    expect((await stateOf(1)).value).toBe('active');
  });

  it('[PLUGIN-05] activating a later version supersedes the earlier one; an active version cannot be activated again', async () => {
    await upload(CALC_WAT, '64Mi');
    expect((await activate(capabilityId, 3)).json.data.active_version).toBe(3);
    expect((await capability()).active_version).toBe(3);
    expect((await stateOf(1)).value).toBe('superseded');
    const again = await activate(capabilityId, 3);
    expect(again.status).toBe(409);
    expect(again.json.code).toBe('MGMT_ACTIVATION_CONFLICT');
  });

  it('answers unknown versions 404 and callers without write authority 403', async () => {
    expect((await activate(capabilityId, 99)).status).toBe(404);
    expect((await activate('not-a-uuid', 1)).status).toBe(404);
    expect((await activate(capabilityId, 1, {})).status).toBe(403);
    const { admin } = p.node.services;
    const viewer = await admin.createKey({ principal: (await admin.createPrincipal({ account: p.node.demo!.accountId, name: 'ro', role: 'viewer' })).id });
    expect((await activate(capabilityId, 1, { authorization: `Bearer ${viewer.key}` })).status).toBe(403);
  });
});
