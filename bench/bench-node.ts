// The start of every bench node process: one platform node on a fresh data directory (the PostgreSQL of
// DATABASE_URL, else PGlite; no NATS: one node on its own, as a reference is one process), with the demo tenant
// seeded, stopped on SIGTERM, SIGINT or the end of its standard input, the data directory removed. The node files
// (a2a-node.ts, push-node.ts, hostile-node.ts) add their tenants and print their one JSON line.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { startPlatform, type PlatformNode } from '../bin/node.ts';
import { loadConfig, registerUpload, versionOutcome, type DemoTenant } from '../runtime/index.ts';
import { buildComponent } from '../test/helpers/components.ts';
import { CALC_WAT, CALC_WIT } from '../test/helpers/mcp.ts';
import { npack } from '../test/helpers/npack.ts';

export async function startBenchNode(name: string, extraEnv: NodeJS.ProcessEnv = {}) {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), `bench-${name}-`));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: '0',
    LOG_LEVEL: 'silent',
    PLATFORM_DATA_DIR: dataDir,
    PLATFORM_SEED_DEMO: 'true',
    PLATFORM_SHUTDOWN_GRACE_MS: '1000',
    // Every load connection comes from loopback, one per caller in flight.
    PLATFORM_MAX_CONNECTIONS_PER_ADDRESS: process.env.PLATFORM_MAX_CONNECTIONS_PER_ADDRESS ?? '4096',
    ...extraEnv,
  };
  delete env.NATS_URL;
  const config = loadConfig(env);
  const node = await startPlatform({ config, logger: pino({ level: 'silent' }), writeNodeFile: false });
  // A node compiles its routes' schemas in the background once it serves (about a second of CPU when idle, several
  // under load): that is start-up work, done once per process, so the node is measured after it, as after a warm-up.
  await node.edge.compiled;
  const beforeStop: (() => void)[] = [];
  let stopping = false;
  const stop = (code: number) => {
    if (stopping) return;
    stopping = true;
    for (const f of beforeStop) f();
    void node.close().finally(() => {
      rmSync(dataDir, { recursive: true, force: true });
      process.exit(code);
    });
  };
  process.once('SIGTERM', () => stop(0));
  process.once('SIGINT', () => stop(0));
  if (!process.stdin.isTTY) process.stdin.on('end', () => stop(0)).resume();
  const demo = node.demo;
  if (!demo) {
    process.stderr.write(`${name}-node: the database was not empty, so no demo tenant was seeded: give the node a fresh database\n`);
    stop(1);
    throw new Error('no demo tenant');
  }
  return {
    node,
    config,
    demo,
    driver: (config.databaseUrl ? 'pg' : 'pglite') as 'pg' | 'pglite',
    /** Runs `f` when the node stops (servers of the node file). */
    onStop: (f: () => void) => beforeStop.push(f),
    /** Ends the process with `code` after closing the node: the node file's failure. */
    fail(err: unknown) {
      process.stderr.write(`${name}-node: ${(err as Error)?.stack ?? String(err)}\n`);
      stop(1);
    },
  };
}


/** Uploads the calc plugin (`add`, and two more exports) to the demo tenant as its user: its capability id. */
export async function uploadCalc({ node, demo }: { node: PlatformNode; demo: DemoTenant }): Promise<string> {
  const svc = node.services;
  const user = (await svc.store.principals.findUserByEmail(demo.userEmail))!;
  const wasm = await buildComponent({ wit: CALC_WIT, world: 'calc', wat: CALC_WAT });
  const archive = await npack([
    { name: 'calc.wasm', body: Buffer.from(wasm) },
    { name: 'platform.yaml', body: 'schema_version: "1.0"\nmetadata: { name: calc }' },
    { name: 'calc.wit', body: CALC_WIT },
  ]);
  const up = await registerUpload(svc, { accountId: demo.accountId, principalId: user.id, filename: 'calc.npack', archive });
  await versionOutcome(svc, { accountId: demo.accountId, capabilityId: up.capability_id, version: 1 });
  return up.capability_id;
}
