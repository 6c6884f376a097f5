import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPlatform, type PlatformNode } from '../../bin/node.ts';
import { accountAddress, loadConfig, shardOf, subscribeActor, type ActorStreamItem } from '../../runtime/index.ts';
import { DEVICE_GRANT } from '../helpers/identity.ts';
import { mustRun } from '../helpers/env.ts';
import { privateDatabase, privateNats } from '../helpers/cluster.ts';

const until = async (what: string, cond: () => boolean | Promise<boolean>, ms = 15_000) => {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
};

describe.skipIf(!mustRun('cluster'))('a cluster of in-process nodes over NATS', () => {
  let db: Awaited<ReturnType<typeof privateDatabase>>;
  let nats: Awaited<ReturnType<typeof privateNats>>;
  const nodes: PlatformNode[] = [];
  const cluster = `c${randomBytes(4).toString('hex')}`;

  const startNode = async (i: number, seed = false) => {
    const config = loadConfig({
      PORT: '0',
      DATABASE_URL: db.url,
      NATS_URL: nats.url,
      PLATFORM_CLUSTER: cluster,
      PLATFORM_NODE_ID: `node-${i}`,
      PLATFORM_LEASE_MS: '1500',
      PLATFORM_SEED_DEMO: String(seed),
      PLATFORM_SHUTDOWN_GRACE_MS: '500',
    });
    const node = await startPlatform({ config, logger: pino({ level: 'silent' }), writeNodeFile: false });
    nodes.push(node);
    return node;
  };
  const owned = () => nodes.map((n) => n.services.cluster!.manager.ownedShards().length);
  const api = async (node: PlatformNode, method: 'GET' | 'POST', path: string, json?: unknown) => {
    const res = await request(`${node.edge.localUrl}${path}`, {
      method,
      headers: { host: 'api.localhost', 'content-type': 'application/json' },
      ...(json ? { body: JSON.stringify(json) } : {}),
    });
    return { status: res.statusCode, json: (await res.body.json()) as any };
  };

  beforeAll(async () => {
    db = await privateDatabase();
    nats = await privateNats();
    await startNode(1, true);
    await startNode(2);
    await startNode(3);
    await until('all shards owned once', () => owned().reduce((a, b) => a + b, 0) === 256 && owned().every((n) => n > 40));
  }, 90_000);
  afterAll(async () => {
    for (const n of nodes) await n.close().catch(() => {});
    await nats?.dispose();
    await db?.drop();
  }, 60_000);

  it('spreads the 256 shards over the members, each owned by one node', () => {
    const sets = nodes.map((n) => new Set(n.services.cluster!.manager.ownedShards()));
    for (let s = 0; s < 256; s++) expect(sets.filter((set) => set.has(s))).toHaveLength(1);
  });

  it('a device flow started on node 1, approved on node 2 and polled on node 3 works', async () => {
    const [a, b, c] = nodes as [PlatformNode, PlatformNode, PlatformNode];
    const started = await api(a, 'POST', '/oauth/device/authorize', { client_id: 'multi' });
    expect(started.status).toBe(200);
    const poll = () => api(c, 'POST', '/oauth/token', { grant_type: DEVICE_GRANT, code: started.json.device_code, client_id: 'multi' });
    expect((await poll()).status).toBe(400);
    const user = await b.services.store.principals.findUserByEmail('demo@example.com');
    const session = await b.services.deviceFlow.lookup(started.json.user_code);
    expect(await b.services.deviceFlow.decide(session!.id, { userId: user!.id, accountId: user!.accountId }, true)).toBe(true);
    const token = await poll();
    expect(token.status).toBe(200);
    expect((await poll()).status).toBe(400);
  });

  it('[MCP-PROTO-15] an MCP session opened on one node is valid on every node, and a DELETE on any ends it everywhere', async () => {
    const [a, b, c] = nodes as [PlatformNode, PlatformNode, PlatformNode];
    const demo = a.demo!;
    await a.services.admin.setBudget({ account: demo.accountId, credits: 1_000 });
    const mcp = async (node: PlatformNode, method: 'POST' | 'DELETE', headers: Record<string, string>, body?: unknown) => {
      const res = await request(`${node.edge.localUrl}/`, {
        method,
        headers: { host: `mcp-demo.${a.services.config.domain}`, accept: 'application/json, text/event-stream', 'content-type': 'application/json', authorization: `Bearer ${demo.userKey}`, ...headers },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      await res.body.text();
      return { status: res.statusCode, sid: res.headers['mcp-session-id'] as string | undefined };
    };
    const init = await mcp(a, 'POST', {}, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
    expect(init.status).toBe(200);
    const session = { 'mcp-session-id': init.sid!, 'mcp-protocol-version': '2025-11-25' };
    const ping = (node: PlatformNode) => mcp(node, 'POST', session, { jsonrpc: '2.0', id: 2, method: 'ping' });
    for (const node of [a, b, c]) expect((await ping(node)).status).toBe(200);
    expect((await mcp(b, 'DELETE', session)).status).toBe(204);
    // Every node had it cached; the DELETE's invalidation over NATS drops it on all of them.
    for (const node of [a, b, c]) await until('the session ended on every node', async () => (await ping(node)).status === 404, 5_000);
  });

  it('an actor is hosted only by its shard owner, and any node reaches it', async () => {
    const [a, b, c] = nodes as [PlatformNode, PlatformNode, PlatformNode];
    const { id } = await a.services.admin.createAccount({ name: 'routed' });
    const address = accountAddress(id);
    await b.services.actors.ask(address, { type: 'BUDGET_SET', credits: 10 });
    const s = await c.services.actors.ask(address, { type: 'DEBIT', amount: 3, requestId: 'r' });
    expect(s.context).toMatchObject({ credits: 7 });
    const owners = nodes.filter((n) => n.services.cluster!.manager.owns(shardOf(address)));
    expect(owners).toHaveLength(1);
    expect(nodes.map((n) => n.services.host.activeCount() > 0)).toContain(true);
  });

  it('a subscriber on one node sees every event of an actor another node hosts, in order, once', async () => {
    const [a] = nodes as [PlatformNode];
    const { id } = await a.services.admin.createAccount({ name: 'followed' });
    const address = accountAddress(id);
    const owner = nodes.find((n) => n.services.cluster!.manager.owns(shardOf(address)))!;
    const watcher = nodes.find((n) => n !== owner)!;
    const driver = nodes.find((n) => n !== owner && n !== watcher)!;
    await driver.services.actors.ask(address, { type: 'SUSPEND' });
    const seen: ActorStreamItem[] = [];
    const sub = subscribeActor({ bus: watcher.services.bus, actors: watcher.services.actors, journal: watcher.services.store.actorEvents }, address, (i) => seen.push(i));
    expect(await sub.ready).toMatchObject({ seq: 1, value: { status: 'suspended' } });
    // Asked through a third node, committed on the owner, followed on the watcher.
    for (let i = 0; i < 10; i++) await driver.services.actors.ask(address, { type: i % 2 ? 'SUSPEND' : 'RESUME' });
    await until('every event', () => seen.length === 11, 5_000);
    await new Promise((r) => setTimeout(r, 200));
    await sub.close();
    expect(seen[0]).toMatchObject({ type: 'snapshot' });
    const events = seen.slice(1) as Extract<ActorStreamItem, { type: 'event' }>[];
    expect(events.map((e) => e.seq)).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    expect(events.map((e) => e.event.type)).toEqual(Array.from({ length: 10 }, (_, i) => (i % 2 ? 'account.suspended' : 'account.resumed')));
  });

  it('a gateway changed through one node is changed in every node\'s copy at once, by the actor\'s event', async () => {
    const [a, b, c] = nodes as [PlatformNode, PlatformNode, PlatformNode];
    const demo = a.demo!;
    const g = await a.services.admin.createGateway({ account: demo.accountId, handle: 'everywhere', auth: 'private', presentation: 'direct' });
    // Every node reads it once (each keeps a copy, trusted for 30 s without news).
    for (const n of [b, c]) expect(await n.services.gateways.byHandle('everywhere')).toMatchObject({ id: g.id, status: 'active', configVersion: 1 });
    await a.services.admin.suspendGateway({ gateway: g.id });
    await a.services.admin.configureGateway({ gateway: 'everywhere', presentation: 'unified' });
    for (const n of [b, c]) {
      await until('the copy follows the actor', async () => (await n.services.gateways.byHandle('everywhere'))?.configVersion === 2, 3_000);
      expect(await n.services.gateways.byHandle('everywhere')).toMatchObject({ status: 'suspended', presentationMode: 'unified', configVersion: 2 });
    }
  });

  it('durable timers fire once, on the owner', async () => {
    const [a] = nodes as [PlatformNode];
    const { id } = await a.services.admin.createAccount({ name: 'timed' });
    const address = accountAddress(id);
    await a.services.actors.ask(address, { type: 'SUSPEND', until: Date.now() + 1_000 });
    await until('the resume timer', async () => ((await a.services.actors.read(address))?.value as { status: string }).status === 'active', 10_000);
    expect(await a.services.store.timers.listFor(address)).toEqual([]);
  });

  it('a node joining mid-load takes shards without failing requests; a node leaving hands its shards off', async () => {
    const [a] = nodes as [PlatformNode];
    const accounts: string[] = [];
    for (let i = 0; i < 12; i++) accounts.push(accountAddress((await a.services.admin.createAccount({ name: `load-${i}` })).id));
    for (const acc of accounts) await a.services.actors.ask(acc, { type: 'BUDGET_SET', credits: 1_000_000 });
    // Clients talk to nodes that stay; the leaving node drains its own clients (HTTP) before it goes.
    const stable = [nodes[0]!, nodes[2]!];
    let stop = false;
    let acked = 0;
    const failures: unknown[] = [];
    const loops = accounts.map(async (acc, i) => {
      let n = 0;
      while (!stop) {
        try {
          await stable[i % 2]!.services.actors.ask(acc, { type: 'DEBIT', amount: 1, requestId: `${i}-${n++}` });
          acked++;
        } catch (err) {
          failures.push(err);
        }
      }
    });
    await new Promise((r) => setTimeout(r, 500));
    const joined = await startNode(4);
    await until('the new node owns shards', () => joined.services.cluster!.manager.ownedShards().length > 30);
    await new Promise((r) => setTimeout(r, 500));
    const leaving = nodes.splice(1, 1)[0]!;
    await leaving.close();
    await until('the rest own every shard', () => owned().reduce((x, y) => x + y, 0) === 256);
    await new Promise((r) => setTimeout(r, 300));
    stop = true;
    await Promise.all(loops);
    expect(failures.map((e) => `${(e as { code?: string }).code}: ${(e as Error).message}`)).toEqual([]);
    expect(acked).toBeGreaterThan(100);
    let spent = 0;
    for (const acc of accounts) spent += 1_000_000 - ((await a.services.actors.read(acc))!.context as { credits: number }).credits;
    expect(spent).toBe(acked);
  }, 60_000);
});
