import { randomBytes } from 'node:crypto';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { DATABASE_URL, NATS_SERVER } from './env.ts';

/** A private database on the PostgreSQL of DATABASE_URL, dropped afterwards. */
export async function privateDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: DATABASE_URL });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const u = new URL(DATABASE_URL!);
  u.pathname = `/${name}`;
  return {
    url: u.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: DATABASE_URL });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}

export async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

/** A private nats-server (JetStream on) that a test may stop and restart without disturbing anyone else. */
export async function privateNats(): Promise<{ url: string; start(): Promise<void>; stop(): Promise<void>; dispose(): Promise<void> }> {
  const port = await freePort();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'nats-'));
  let child: ChildProcess | null = null;
  const waitPort = async (open: boolean) => {
    for (let i = 0; i < 100; i++) {
      const up = await new Promise<boolean>((r) => {
        const s = net.connect(port, '127.0.0.1', () => (s.destroy(), r(true)));
        s.on('error', () => r(false));
      });
      if (up === open) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`nats-server on ${port} did not ${open ? 'start' : 'stop'}`);
  };
  const api = {
    url: `nats://127.0.0.1:${port}`,
    async start() {
      child = spawn(NATS_SERVER, ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', dir], { stdio: 'ignore' });
      await waitPort(true);
    },
    async stop() {
      const c = child;
      child = null;
      if (!c) return;
      const closed = new Promise((r) => c.on('close', r));
      c.kill('SIGTERM');
      await closed;
      await waitPort(false);
    },
    async dispose() {
      await api.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await api.start();
  return api;
}

/** Waits until `size` live members of a cluster serve all 256 shards between them (each holding some). */
export async function clusterSettled(natsUrl: string, cluster: string, size: number, ms = 30_000): Promise<void> {
  const { clusterStatus } = await import('../../bin/cli/cluster.ts');
  for (const t0 = Date.now(); ; ) {
    const s = await clusterStatus(natsUrl, cluster).catch(() => null);
    const counts = s?.members.map((m) => m.shards.length) ?? [];
    if (counts.length === size && counts.every((n) => n > 0) && counts.reduce((a, b) => a + b, 0) === 256) return;
    if (Date.now() - t0 > ms) throw new Error(`the cluster did not settle on ${size} members`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
