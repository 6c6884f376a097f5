import os from 'node:os';
import path from 'node:path';
import { mkdtempSync, rmSync } from 'node:fs';
import pino from 'pino';
import { startPlatform } from '../bin/node.ts';
import { loadConfig } from '../runtime/index.ts';
import { openStore } from '../store/index.ts';
import type { Scope } from './cleanup.ts';
import { status } from './runner.ts';

/**
 * A platform node in the bench's own process (PGlite, the demo tenant seeded), for scenarios whose reference runs
 * in-process too. The MCP limiters still count every call, with limits raised so a load test is not a rate-limit
 * test; likewise the per-address connection cap (every load connection comes from loopback). Stopped with `s`.
 */
export async function inProcessNode(s: Scope, name: string, concurrency: number) {
  status(`${name}: starting a platform node (PGlite)`);
  const dataDir = mkdtempSync(path.join(os.tmpdir(), `bench-${name}-`));
  s.defer('remove the data directory', () => rmSync(dataDir, { recursive: true, force: true }));
  const store = await openStore({ driver: 'pglite' });
  s.defer('close the store', () => store.close());
  const config = loadConfig({
    PORT: '0',
    LOG_LEVEL: 'silent',
    PLATFORM_DATA_DIR: dataDir,
    PLATFORM_MCP_REQUEST_RATE: '1000000000',
    PLATFORM_MCP_INITIALIZE_RATE: '1000000',
    PLATFORM_MAX_CONNECTIONS_PER_ADDRESS: String(Math.max(1024, concurrency)),
  });
  const node = await startPlatform({ config, store, logger: pino({ level: 'silent' }), writeNodeFile: false });
  s.defer('stop the platform node', () => node.close());
  await node.services.admin.setBudget({ account: node.demo!.accountId, credits: 1_000_000_000 });
  return { node, config, demo: node.demo! };
}
