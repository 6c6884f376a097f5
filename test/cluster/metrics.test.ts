import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPlatform, type PlatformNode } from '../../bin/node.ts';
import { loadConfig, SHARD_COUNT } from '../../runtime/index.ts';
import { mustRun } from '../helpers/env.ts';
import { privateDatabase, privateNats } from '../helpers/cluster.ts';

const TOKEN = randomBytes(24).toString('hex');

const until = async (what: string, cond: () => boolean | Promise<boolean>, ms = 20_000) => {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
};

/** One sample of a metric without labels, from a node scraped at its own address (Host: the address). */
async function gauge(node: PlatformNode, name: string): Promise<number> {
  const res = await request(`${node.edge.localUrl}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
  const text = await res.body.text();
  expect(res.statusCode, text).toBe(200);
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  if (!line) throw new Error(`no sample of ${name}`);
  return Number(line.slice(name.length + 1));
}

describe.skipIf(!mustRun('cluster'))('metrics of cluster members', () => {
  let db: Awaited<ReturnType<typeof privateDatabase>>;
  let nats: Awaited<ReturnType<typeof privateNats>>;
  const nodes: PlatformNode[] = [];
  const cluster = `m${randomBytes(4).toString('hex')}`;
  const owned = () => nodes.map((n) => n.services.cluster!.manager.ownedShards().length);

  beforeAll(async () => {
    db = await privateDatabase();
    nats = await privateNats();
    for (const i of [1, 2]) {
      const config = loadConfig({
        PORT: '0',
        DATABASE_URL: db.url,
        NATS_URL: nats.url,
        PLATFORM_CLUSTER: cluster,
        PLATFORM_NODE_ID: `metrics-${i}`,
        PLATFORM_LEASE_MS: '1500',
        PLATFORM_SEED_DEMO: 'false',
        PLATFORM_SHUTDOWN_GRACE_MS: '500',
        PLATFORM_METRICS_TOKEN: TOKEN,
      });
      nodes.push(await startPlatform({ config, logger: pino({ level: 'silent' }), writeNodeFile: false }));
    }
    await until('every shard owned once, by both members', () => owned().reduce((a, b) => a + b, 0) === SHARD_COUNT && owned().every((n) => n > 0));
  }, 90_000);
  afterAll(async () => {
    for (const n of nodes) await n.close().catch(() => {});
    await nats?.dispose();
    await db?.drop();
  }, 60_000);

  it('each node reports the shards it owns (together all of them once) and the members it sees', async () => {
    // Ownership is settled (checked above); a scrape reads what the shard manager holds at that moment.
    const reported = await Promise.all(nodes.map((n) => gauge(n, 'platform_shards_owned')));
    expect(reported).toEqual(owned());
    expect(reported.reduce((a, b) => a + b, 0)).toBe(SHARD_COUNT);
    expect(reported.every((n) => n > 0 && n < SHARD_COUNT)).toBe(true);
    expect(await Promise.all(nodes.map((n) => gauge(n, 'platform_cluster_members')))).toEqual([2, 2]);
  });
});
