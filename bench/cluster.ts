import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { jetstreamManager } from '@nats-io/jetstream';
import pg from 'pg';
import { clusterStatus } from '../bin/cli/cluster.ts';
import { connectNats, createActorRouter, createNatsBus, membersBucket, rendezvousOwner, shardsBucket } from '../runtime/index.ts';
import type { Scope } from './cleanup.ts';
import { entryArgv } from './entries.ts';
import { status } from './runner.ts';
import { profileFlags } from './profiles.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SHARDS = 256;

/** A problem with the machine or the environment, not a bug: printed as a sentence, without a stack. */
export class SetupError extends Error {}

export interface ClusterEnv {
  databaseUrl: string;
  natsUrl: string;
}

export function clusterEnv(scenario: string): ClusterEnv {
  const databaseUrl = process.env.DATABASE_URL;
  const natsUrl = process.env.NATS_URL;
  const missing = [!databaseUrl && 'DATABASE_URL (PostgreSQL)', !natsUrl && 'NATS_URL (nats-server 2.9+ with JetStream)'].filter(Boolean);
  if (missing.length) {
    throw new SetupError(
      `${scenario} needs ${missing.join(' and ')}, e.g.\n  DATABASE_URL=postgres://postgres@127.0.0.1:5432/test NATS_URL=nats://127.0.0.1:4222 npm run bench -- ${scenario}`,
    );
  }
  return { databaseUrl: databaseUrl!, natsUrl: natsUrl! };
}

/**
 * A database of its own on the server of DATABASE_URL, dropped at cleanup: a cluster's shard fences live in the
 * database, so a fresh cluster on a used database would find fences it can never pass.
 */
export async function privateDatabase(scope: Scope, adminUrl: string): Promise<string> {
  const name = `bench_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  scope.defer(`drop database ${name}`, async () => {
    const c = new pg.Client({ connectionString: adminUrl });
    await c.connect();
    try {
      await c.query(`drop database if exists ${name} with (force)`);
    } finally {
      await c.end();
    }
  });
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  return u.toString();
}

/** Removes the cluster's membership and lease buckets from the (shared) NATS server once its nodes are gone. */
export function deleteClusterBuckets(scope: Scope, natsUrl: string, cluster: string): void {
  scope.defer(`delete the NATS KV buckets of ${cluster}`, async () => {
    const nc = await connectNats(natsUrl, `bench-cleanup-${process.pid}`);
    try {
      const jsm = await jetstreamManager(nc);
      for (const bucket of [membersBucket(cluster), shardsBucket(cluster)]) {
        await jsm.streams.delete(`KV_${bucket}`).catch((err: unknown) => {
          if (!/not found/i.test((err as Error).message)) throw err;
        });
      }
    } finally {
      await nc.close();
    }
  });
}

export function stopChild(child: ChildProcess, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const killer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('close', () => {
      clearTimeout(killer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

export interface NodeProcess {
  nodeId: string;
  pid: number;
  port: number;
}

/**
 * Starts `platform serve` as a child process and resolves once its banner names the port. The stop step is
 * registered before the banner, so a node that hangs while starting is still stopped.
 */
export function startNode(scope: Scope, env: ClusterEnv & { cluster: string; nodeId: string }): Promise<NodeProcess> {
  // Its own data directory: the default (./.platform) holds the node file of a developer's own `npm start`.
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'bench-node-'));
  const child = spawn(process.execPath, [...profileFlags(`node-${env.nodeId}`), '--max-semi-space-size=64', ...entryArgv('platform'), 'serve'], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: env.databaseUrl,
      NATS_URL: env.natsUrl,
      PLATFORM_CLUSTER: env.cluster,
      PLATFORM_NODE_ID: env.nodeId,
      PLATFORM_DATA_DIR: dataDir,
      PLATFORM_SEED_DEMO: 'false',
      PLATFORM_SHUTDOWN_GRACE_MS: '1000',
      PORT: '0',
      LOG_LEVEL: 'silent',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  scope.defer(`stop node ${env.nodeId} (pid ${child.pid})`, async () => {
    await stopChild(child, 15_000);
    rmSync(dataDir, { recursive: true, force: true });
  });
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new SetupError(`node ${env.nodeId} printed no banner within 60 s\n${out}${err}`)), 60_000);
    child.stderr!.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
    child.stdout!.on('data', (d: Buffer) => {
      if (out.length > 8000) return;
      out += d.toString();
      const m = /listening on \S+:(\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ nodeId: env.nodeId, pid: child.pid!, port: Number(m[1]) });
      }
    });
    child.once('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      reject(new SetupError(`node ${env.nodeId} exited (${signal ?? code}) while starting\n${out}${err}`));
    });
  });
}

/**
 * Waits until exactly `nodeIds` are members and each serves the shards rendezvous hashing gives it, as the nodes
 * themselves report it: a cluster still handing shards over would make the first seconds of a phase measure the
 * handoff. Returns the milliseconds it took and the shards per node.
 */
export async function waitForSettledCluster(natsUrl: string, cluster: string, nodeIds: string[], timeoutMs = 60_000): Promise<{ ms: number; shards: Record<string, number> }> {
  const t0 = Date.now();
  const expected = [...nodeIds].sort();
  let last = 'no answer yet';
  for (;;) {
    const s = await clusterStatus(natsUrl, cluster).catch((err: unknown) => {
      last = (err as Error).message;
      return null;
    });
    if (s) {
      const members = s.members.filter((m) => m.reachable).map((m) => m.nodeId).sort();
      const servedBy = new Map<number, string[]>();
      for (const m of s.members) for (const shard of m.shards) servedBy.set(shard, [...(servedBy.get(shard) ?? []), m.nodeId]);
      const settled =
        members.join() === expected.join() &&
        s.members.length === expected.length &&
        s.shards.length === SHARDS &&
        s.shards.every((x) => x.owner === rendezvousOwner(x.shard, expected)) &&
        Array.from({ length: SHARDS }, (_, i) => servedBy.get(i)).every((by, i) => by?.length === 1 && by[0] === rendezvousOwner(i, expected));
      if (settled) return { ms: Date.now() - t0, shards: Object.fromEntries(s.members.map((m) => [m.nodeId, m.shards.length])) };
      last = `members ${members.join(', ') || 'none'}, ${s.shards.length} of ${SHARDS} shards leased`;
    }
    if (Date.now() - t0 > timeoutMs) throw new SetupError(`cluster ${cluster} did not settle on ${expected.join(', ')} within ${timeoutMs} ms (${last})`);
    await sleep(100);
  }
}

/** The reference responder: a bare NATS subscriber in its own Node process, answering every request with `reply`. */
export function startRawResponder(scope: Scope, natsUrl: string, subject: string, reply: string): Promise<{ pid: number }> {
  // stdin stays open as a lifeline: if this process dies without cleaning up, the responder sees EOF and exits.
  const child = spawn(process.execPath, [...entryArgv('raw-responder'), natsUrl, subject], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, BENCH_RAW_REPLY: reply } });
  scope.defer(`stop the raw responder (pid ${child.pid})`, () => stopChild(child, 5_000));
  return new Promise((resolve, reject) => {
    let err = '';
    const timer = setTimeout(() => reject(new SetupError(`the raw responder did not start within 30 s\n${err}`)), 30_000);
    child.stderr!.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
    child.stdout!.on('data', (d: Buffer) => {
      if (d.toString().includes('ready')) {
        clearTimeout(timer);
        resolve({ pid: child.pid! });
      }
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      reject(new SetupError(`the raw responder exited (${code}) while starting\n${err}`));
    });
  });
}

/**
 * One `platform serve` child owning every shard of a fresh cluster (a private database, a unique cluster name) and a
 * router in this process, which hosts nothing: every call it makes crosses NATS to the node, as a gateway's would.
 */
export async function oneNodeCluster(scope: Scope, scenario: string) {
  const env = clusterEnv(scenario);
  status(`${scenario}: creating a private database`);
  const databaseUrl = await privateDatabase(scope, env.databaseUrl);
  const cluster = `bench${randomBytes(4).toString('hex')}`;
  deleteClusterBuckets(scope, env.natsUrl, cluster);
  status(`${scenario}: starting one platform node (cluster ${cluster})`);
  const node = await startNode(scope, { ...env, databaseUrl, cluster, nodeId: 'bench-host' });
  const settled = await waitForSettledCluster(env.natsUrl, cluster, [node.nodeId]);
  status(`${scenario}: node ${node.nodeId} (pid ${node.pid}) serves all 256 shards after ${settled.ms} ms`);
  const nc = await connectNats(env.natsUrl, `bench-client-${process.pid}`);
  scope.defer('close the bench NATS connection', () => nc.close());
  return { env, databaseUrl, cluster, node, nc, router: createActorRouter({ bus: createNatsBus(nc, cluster) }) };
}
