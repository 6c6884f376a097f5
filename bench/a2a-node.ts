// A platform node for the a2a-send bench, as its own process: it starts (the PostgreSQL of DATABASE_URL, else PGlite;
// one node, no NATS) with the demo tenant, binds the calc plugin to the demo agent so the scripted model can call
// `calc_add`, raises the tenant's budget so a load test is not a budget test, prints one JSON line — the node's URL,
// the agent's Host, a credential the A2A gateway admits (the demo service principal's API key: a service principal
// with execute authority) — and runs until SIGTERM or the end of its standard input.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { startPlatform } from '../bin/node.ts';
import { loadConfig, registerUpload, versionOutcome } from '../runtime/index.ts';
import { buildComponent } from '../test/helpers/components.ts';
import { CALC_WAT, CALC_WIT } from '../test/helpers/mcp.ts';
import { npack } from '../test/helpers/npack.ts';

export interface A2aNodeInfo {
  /** Where to connect (loopback). */
  url: string;
  /** The demo agent's Host header, `agent-demo.<domain>[:port]`. */
  host: string;
  /** The demo service principal's API key. */
  key: string;
  driver: 'pg' | 'pglite';
  /** The capability bound to the demo agent. */
  capabilityId: string;
}

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'bench-a2a-'));
const env: NodeJS.ProcessEnv = {
  ...process.env,
  PORT: '0',
  LOG_LEVEL: 'silent',
  PLATFORM_DATA_DIR: dataDir,
  PLATFORM_SEED_DEMO: 'true',
  PLATFORM_SHUTDOWN_GRACE_MS: '1000',
  // Every load connection comes from loopback, one per caller in flight.
  PLATFORM_MAX_CONNECTIONS_PER_ADDRESS: process.env.PLATFORM_MAX_CONNECTIONS_PER_ADDRESS ?? '4096',
};
// One node on its own, as the reference is one process: no cluster.
delete env.NATS_URL;
const config = loadConfig(env);
const node = await startPlatform({ config, logger: pino({ level: 'silent' }), writeNodeFile: false });
let stopping = false;
const stop = (code: number) => {
  if (stopping) return;
  stopping = true;
  void node.close().finally(() => {
    rmSync(dataDir, { recursive: true, force: true });
    process.exit(code);
  });
};
process.once('SIGTERM', () => stop(0));
process.once('SIGINT', () => stop(0));
if (!process.stdin.isTTY) process.stdin.on('end', () => stop(0)).resume();

try {
  const demo = node.demo;
  if (!demo) throw new Error('the database was not empty, so no demo tenant was seeded: give the node a fresh database');
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
  await svc.admin.bindAgent({ agent: 'demo', capability: up.capability_id });
  await svc.admin.setBudget({ account: demo.accountId, credits: 1_000_000_000 });
  const info: A2aNodeInfo = { url: node.edge.localUrl, host: new URL(demo.agentUrl).host, key: demo.serviceKey, driver: config.databaseUrl ? 'pg' : 'pglite', capabilityId: up.capability_id };
  process.stdout.write(`${JSON.stringify(info)}\n`);
} catch (err) {
  process.stderr.write(`a2a-node: ${(err as Error)?.stack ?? String(err)}\n`);
  stop(1);
}
