import { request, FormData } from 'undici';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPlatform } from '../../bin/node.ts';
import { loadConfig, pluginVersionAddress, versionOutcome } from '../../runtime/index.ts';
import { buildComponent, CALC_WAT, CALC_WIT } from '../helpers/components.ts';
import { npack } from '../helpers/npack.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { freshStore } from '../helpers/store.ts';

// Needs 10 pages (640 KiB) of memory at start: activation under a 64Ki limit must fail.
const HUNGRY_WAT = CALC_WAT.replace('(memory (export "memory") 1)', '(memory (export "memory") 10)');

const archiveOf = async (wat: string, memory: string) =>
  npack([{ name: 'calc.wasm', body: Buffer.from(await buildComponent({ wit: CALC_WIT, world: 'calc', wat })) }, { name: 'platform.yaml', body: `schema_version: "1.0"\nmetadata: { name: acalc }\nresources: { limits: { memory: ${memory} } }` }]);

describe('plugin versions activate themselves', () => {
  let p: TestPlatform;
  let key: string;
  let capabilityId: string;
  const auth = () => ({ authorization: `Bearer ${key}` });
  const upload = async (wat: string, memory: string) => {
    const form = new FormData();
    form.append('archive', new Blob([await archiveOf(wat, memory)]), 'acalc.npack');
    const res = await request(`${p.url}/v1/capabilities/upload`, { method: 'POST', headers: { host: 'api.localhost', ...auth() }, body: form });
    return (await res.body.json()) as { data: { capability_id: string; version: number } };
  };
  const settled = (version: number) => versionOutcome(p.node.services, { accountId: p.node.demo!.accountId, capabilityId, version });
  const activate = (id: string, version: number | string, headers: Record<string, string> = auth()) => p.call('POST', `/v1/capabilities/${id}/versions/${version}/activate`, { headers });
  const capability = async () => (await p.call('GET', '/v1/capabilities?namespace=acalc', { headers: auth() })).json.data.capabilities[0];
  const stateOf = async (version: number) => (await p.node.services.actors.read(pluginVersionAddress(p.node.demo!.accountId, capabilityId, version)))!;
  const journal = async (version: number) => (await p.node.services.store.actorEvents.after(pluginVersionAddress(p.node.demo!.accountId, capabilityId, version), 0)).map((e) => (e.event as { type: string }).type);

  beforeAll(async () => {
    p = await startTestPlatform();
    key = p.node.demo!.userKey;
  }, 60_000);
  afterAll(() => p.close());

  it('[PLUGIN-01] [PLUGIN-02] [PLUGIN-05] an upload creates the version dormant, which activates itself: artifacts stored by hash, active_version flipped', async () => {
    const up = await upload(CALC_WAT, '64Mi');
    capabilityId = up.data.capability_id;
    expect(await settled(1)).toEqual({ state: 'active', reason: null });
    expect(await journal(1)).toEqual(['version.activating', 'version.activated']);
    const cap = await capability();
    expect(cap).toMatchObject({ active_version: 1, is_active: true, specifications: { active_version: 1, versions: [{ version_number: 1, status: 'active', status_reason: null }] } });
    const { rows } = await p.node.services.store.db.query<{ artifact_hash: string }>('select artifact_hash from capability_versions where capability_id = $1 and version_number = 1', [capabilityId]);
    const manifest = JSON.parse((await p.node.services.store.blobs.get(rows[0]!.artifact_hash))!.toString()) as Record<string, string>;
    expect(Object.keys(manifest)).toEqual(expect.arrayContaining(['plugin.js', 'plugin.core.wasm']));
    for (const hash of Object.values(manifest)) expect(await p.node.services.store.blobs.get(hash)).not.toBeNull();
  });

  it('[PLUGIN-03] a failed activation leaves the version dormant, with its reason in the capability, and the previous version serving', async () => {
    const up = await upload(HUNGRY_WAT, '64Ki');
    expect(up.data.version).toBe(2);
    const outcome = await settled(2);
    expect(outcome.state).toBe('dormant');
    expect(outcome.reason).toMatch(/needs 10 pages of memory at start, above the plugin's limit of 1/);
    const cap = await capability();
    expect(cap.active_version).toBe(1);
    expect(cap.specifications.versions[1]).toMatchObject({ version_number: 2, status: 'dormant', status_reason: expect.stringMatching(/10 pages/) });
    expect((await stateOf(1)).value).toBe('active');
    // Asking again runs it again, and fails the same way, as the documented route's 400.
    const res = await activate(capabilityId, 2);
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ category: 'invalid_request', code: 'ACTIVATION_FAILED', message: expect.stringMatching(/10 pages/) });
  });

  it('[PLUGIN-05] a later upload supersedes the earlier version; the activate route rolls back to it; an active version is not activated again', async () => {
    const up = await upload(CALC_WAT, '64Mi');
    expect(await settled(up.data.version)).toEqual({ state: 'active', reason: null });
    expect((await capability()).active_version).toBe(3);
    expect((await stateOf(1)).value).toBe('superseded');
    const back = await activate(capabilityId, 1);
    expect(back.status).toBe(200);
    expect(back.json).toEqual({ data: { capability_id: capabilityId, active_version: 1 } });
    expect((await capability()).active_version).toBe(1);
    expect((await stateOf(3)).value).toBe('superseded');
    const again = await activate(capabilityId, 1);
    expect(again.status).toBe(409);
    expect(again.json).toMatchObject({ category: 'conflict', code: 'ACTIVATION_NOT_ALLOWED' });
  });

  it('concurrent requests activate a version once', async () => {
    const before = (await journal(3)).filter((t) => t === 'version.activated').length;
    const answers = await Promise.all(Array.from({ length: 5 }, () => activate(capabilityId, 3)));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    expect((await journal(3)).filter((t) => t === 'version.activated').length).toBe(before + 1);
    expect((await capability()).active_version).toBe(3);
  });

  it('answers unknown versions 404 and callers without write authority 403', async () => {
    expect((await activate(capabilityId, 99)).json).toMatchObject({ category: 'not_found', code: 'PLUGIN_VERSION_NOT_FOUND' });
    expect((await activate('not-a-uuid', 1)).status).toBe(404);
    expect((await activate(capabilityId, 1, {})).status).toBe(403);
    const { admin } = p.node.services;
    const viewer = await admin.createKey({ principal: (await admin.createPrincipal({ account: p.node.demo!.accountId, name: 'ro', role: 'viewer' })).id });
    expect((await activate(capabilityId, 1, { authorization: `Bearer ${viewer.key}` })).status).toBe(403);
  });
});

describe('an activation interrupted by a stop', () => {
  it('resumes on the next start and never leaves the version activating', async () => {
    const store = await freshStore('pglite');
    const config = loadConfig({ PORT: '0', LOG_LEVEL: 'silent', PLATFORM_SHUTDOWN_GRACE_MS: '100' });
    const first = await startPlatform({ config, store, logger: pino({ level: 'silent' }), writeNodeFile: false });
    const demo = first.demo!;
    const user = (await store.principals.findUserByEmail(demo.userEmail))!;
    const { registerUpload } = await import('../../runtime/index.ts');
    const up = await registerUpload(first.services, { accountId: demo.accountId, principalId: user.id, filename: 'acalc.npack', archive: await archiveOf(CALC_WAT, '64Mi') });
    const address = pluginVersionAddress(demo.accountId, up.capability_id, 1);
    // Stopped while transpiling: the activation's thread is terminated, its effect stays recorded.
    expect((await first.services.actors.read(address))?.value).toBe('activating');
    await first.close();
    expect(await store.effects.forAddress(address)).toMatchObject([{ effectId: 'activate', name: 'activate' }]);
    const second = await startPlatform({ config, store, logger: pino({ level: 'silent' }), writeNodeFile: false });
    try {
      expect(await versionOutcome(second.services, { accountId: demo.accountId, capabilityId: up.capability_id, version: 1 })).toEqual({ state: 'active', reason: null });
      expect(await store.effects.forAddress(address)).toEqual([]);
      expect(await store.capabilities.activeVersion(demo.accountId, up.capability_id)).toBe(1);
    } finally {
      await second.close();
      await store.drop();
    }
  }, 60_000);
});
