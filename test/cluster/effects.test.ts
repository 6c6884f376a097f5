import { randomBytes } from 'node:crypto';
import { request, FormData } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterStatus } from '../../bin/cli/cluster.ts';
import { pluginVersionAddress, shardOf } from '../../runtime/index.ts';
import { openStore, type Store } from '../../store/index.ts';
import { startServe } from '../helpers/cli.ts';
import { clusterSettled, privateDatabase, privateNats } from '../helpers/cluster.ts';
import { mustRun } from '../helpers/env.ts';
import { buildGrantsComponent } from '../helpers/js-components.ts';
import { npack } from '../helpers/npack.ts';

const LEASE_MS = 2_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
type Serve = Awaited<ReturnType<typeof startServe>>;

describe.skipIf(!mustRun('cluster'))('effects on three node processes over NATS and PostgreSQL', () => {
  let db: Awaited<ReturnType<typeof privateDatabase>>;
  let nats: Awaited<ReturnType<typeof privateNats>>;
  let store: Store;
  let userKey: string;
  let accountId: string;
  const cluster = `e${randomBytes(4).toString('hex')}`;
  const nodes = new Map<string, Serve>();
  const env = (id: string, seed: boolean) => ({
    DATABASE_URL: db.url,
    NATS_URL: nats.url,
    PLATFORM_CLUSTER: cluster,
    PLATFORM_NODE_ID: id,
    PLATFORM_LEASE_MS: String(LEASE_MS),
    PLATFORM_SEED_DEMO: String(seed),
    PLATFORM_SHUTDOWN_GRACE_MS: '500',
  });
  const api = (node: Serve, method: 'GET' | 'POST', path: string, body?: FormData) =>
    request(`http://127.0.0.1:${node.port}${path}`, { method, headers: { host: 'api.localhost', authorization: `Bearer ${userKey}` }, ...(body ? { body } : {}) }).then(async (r) => ({ status: r.statusCode, json: (await r.body.json()) as any }));
  const ownerOf = async (address: string) => {
    const s = await clusterStatus(nats.url, cluster);
    return s.shards.find((x) => x.shard === shardOf(address))?.owner;
  };

  beforeAll(async () => {
    db = await privateDatabase();
    nats = await privateNats();
    const first = await startServe(env('node-1', true));
    nodes.set('node-1', first);
    userKey = /user API key\s+(ak-\S+)/.exec(first.banner)![1]!;
    nodes.set('node-2', await startServe(env('node-2', false)));
    nodes.set('node-3', await startServe(env('node-3', false)));
    store = await openStore({ driver: 'pg', connectionString: db.url });
    accountId = (await store.principals.findUserByEmail('demo@example.com'))!.accountId;
    await clusterSettled(nats.url, cluster, 3);
  }, 180_000);

  afterAll(async () => {
    for (const n of nodes.values()) n.child.kill('SIGTERM');
    await Promise.all([...nodes.values()].map((n) => n.stopped));
    await store?.close();
    await nats?.dispose();
    await db?.drop();
  }, 60_000);

  it('SIGKILL of the owner while an activation runs: the new owner runs it again and it lands once', async () => {
    const form = new FormData();
    const archive = await npack([
      { name: 'grants.wasm', body: Buffer.from(await buildGrantsComponent()) },
      { name: 'platform.yaml', body: 'schema_version: "1.0"\nmetadata: { name: survivor }\n' },
    ]);
    form.append('archive', new Blob([archive]), 'survivor.npack');
    const up = await api(nodes.get('node-1')!, 'POST', '/v1/capabilities/upload', form);
    expect(up.status).toBe(200);
    const capabilityId: string = up.json.data.capability_id;
    const address = pluginVersionAddress(accountId, capabilityId, 1);
    const owner = (await ownerOf(address))!;
    const victim = nodes.get(owner)!;
    // The component takes seconds to transpile: the owner is still at it when it dies.
    victim.child.kill('SIGKILL');
    await victim.stopped;
    nodes.delete(owner);
    const v = await store.capabilities.versionArtifacts(accountId, capabilityId, 1);
    expect(v?.artifactHash, 'the activation finished before the kill; the test proves nothing').toBeNull();
    expect(await store.effects.forAddress(address)).toMatchObject([{ effectId: 'activate', name: 'activate' }]);

    const survivor = [...nodes.values()][0]!;
    const t0 = Date.now();
    let status = 'activating';
    while (status === 'activating') {
      if (Date.now() - t0 > 60_000) throw new Error('the version did not finish activating on the new owner');
      await sleep(200);
      const cap = await api(survivor, 'GET', `/v1/capabilities/${capabilityId}`);
      status = cap.json.data?.specifications.versions[0].status ?? 'activating';
    }
    expect(status).toBe('active');
    expect(await ownerOf(address)).not.toBe(owner);
    expect(await store.capabilities.activeVersion(accountId, capabilityId)).toBe(1);
    expect(await store.effects.forAddress(address)).toEqual([]);
    // It ran twice (the same idempotency key), and its outcome landed once.
    const journal = (await store.actorEvents.after(address, 0)).map((e) => (e.event as { type: string }).type);
    expect(journal).toEqual(['version.activating', 'version.activated']);
    expect((await store.capabilities.versionArtifacts(accountId, capabilityId, 1))?.activationKey).toBe(`${address}#activate@2`);
  }, 120_000);
});
