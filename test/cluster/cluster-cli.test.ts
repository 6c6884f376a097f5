import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkServerVersion } from '../../runtime/index.ts';
import { CLI, ROOT, runCli } from '../helpers/cli.ts';
import { freePort, privateDatabase, privateNats } from '../helpers/cluster.ts';
import { mustRun } from '../helpers/env.ts';

describe('NATS server check', () => {
  it('refuses a server older than 2.9 or without JetStream, with a clear message', () => {
    expect(() => checkServerVersion('2.8.4', true)).toThrow(/2\.8\.4 is too old: the platform needs 2\.9\.0 or newer/);
    expect(() => checkServerVersion(undefined, true)).toThrow(/too old/);
    expect(() => checkServerVersion('2.9.10', false)).toThrow(/without JetStream/);
    expect(() => checkServerVersion('2.9.0', true)).not.toThrow();
    expect(() => checkServerVersion('2.10.22', true)).not.toThrow();
    expect(() => checkServerVersion('2.12.0-beta.1', true)).not.toThrow();
  });
});

describe.skipIf(!mustRun('cluster'))('platform cluster up and status', () => {
  let db: Awaited<ReturnType<typeof privateDatabase>>;
  let nats: Awaited<ReturnType<typeof privateNats>>;
  beforeAll(async () => {
    db = await privateDatabase();
    nats = await privateNats();
  });
  afterAll(async () => {
    await nats?.dispose();
    await db?.drop();
  });

  it('starts N local nodes, prints their URLs, reports members and shards, and stops them all on Ctrl-C', async () => {
    const cluster = `u${randomBytes(4).toString('hex')}`;
    const base = await freePort();
    const env = { ...process.env, DATABASE_URL: db.url, NATS_URL: nats.url, PLATFORM_CLUSTER: cluster, LOG_LEVEL: 'silent', PLATFORM_SEED_DEMO: 'false' };
    const up = spawn(CLI, ['cluster', 'up', '--nodes', '2', '--base-port', String(base)], { env, cwd: ROOT });
    let out = '';
    up.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((r) => up.on('close', (code) => r(code)));
    try {
      for (let i = 0; i < 400 && !out.includes('Ctrl-C'); i++) await new Promise((r) => setTimeout(r, 100));
      expect(out).toContain(`node-1  http://api.localhost:${base}`);
      expect(out).toContain(`node-2  http://api.localhost:${base + 1}`);
      let status: any;
      for (let i = 0; i < 100; i++) {
        status = (await runCli(['cluster', 'status', '--json'], { NATS_URL: nats.url, PLATFORM_CLUSTER: cluster })).json;
        // Settled: both members report their shards, and together they own every shard (node 2 joins after node 1,
        // so the table passes through states where members have not yet renewed their shard lists).
        const owned = status?.members?.reduce((n: number, m: { shards: number[] }) => n + m.shards.length, 0);
        if (status?.members?.length === 2 && status.members.every((m: { shards: number[] }) => m.shards.length > 0) && status.shards.length === 256 && owned === 256 && status.unowned_shards?.length === 0) break;
        await new Promise((r) => setTimeout(r, 200));
      }
      expect(status.members.map((m: { nodeId: string }) => m.nodeId)).toEqual(['node-1', 'node-2']);
      expect(status.members.reduce((n: number, m: { shards: number[] }) => n + m.shards.length, 0)).toBe(256);
      expect(status.unowned_shards).toEqual([]);
      for (const s of status.shards) expect(s.lease_age_ms).toBeLessThan(3_000);
      // Node 2 joined after node 1: let the rebalance settle before reading the table.
      let table = await runCli(['cluster', 'status'], { NATS_URL: nats.url, PLATFORM_CLUSTER: cluster });
      for (let i = 0; i < 50 && !table.stdout.includes('256 of 256'); i++) {
        await new Promise((r) => setTimeout(r, 200));
        table = await runCli(['cluster', 'status'], { NATS_URL: nats.url, PLATFORM_CLUSTER: cluster });
      }
      expect(table.stdout).toMatch(/node-1\s+http:\/\/127\.0\.0\.1:\d+\s+\d+/);
      expect(table.stdout).toContain('256 of 256 shards owned');
    } finally {
      up.kill('SIGINT');
    }
    expect(await exited).toBe(0);
    const after = await runCli(['cluster', 'status', '--json'], { NATS_URL: nats.url, PLATFORM_CLUSTER: cluster });
    expect(after.json.members).toEqual([]);
  }, 90_000);

  it('says so in one line when no cluster of that name ever ran on that NATS', async () => {
    const none = await runCli(['cluster', 'status'], { NATS_URL: nats.url, PLATFORM_CLUSTER: `never${randomBytes(4).toString('hex')}` });
    expect(none.code).not.toBe(0);
    expect(none.stderr).toMatch(/^error: no cluster named never[0-9a-f]{8} has run on nats:\/\/[^:]+:\d+: start one with `platform cluster up`/);
    expect(none.stderr).not.toContain('INTERNAL');
    expect(none.stderr.trim().split('\n')).toHaveLength(1);
  }, 30_000);
});
