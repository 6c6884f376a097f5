import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startServe } from './cli.ts';
import { buildComponent, CALC_WAT, CALC_WIT } from './components.ts';
import { npack } from './npack.ts';

/**
 * A `platform serve` node in a data directory of its own, with the CLI environment of its demo user and a plugin
 * `test-calc` (tool `test_calc_add`; the demo tenant has its own `calc`) packed as `test-calc.npack` in that
 * directory, for the CLI suites that drive a running node. `serveEnv` adds to the node's environment
 * (PLATFORM_SCRIPTED_RULES, say).
 */
export async function startCliNode(prefix: string, serveEnv: Record<string, string> = {}) {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), prefix));
  const server = await startServe({ ...serveEnv, PLATFORM_DATA_DIR: dataDir });
  const userKey = /user API key\s+(ak-\S+)/.exec(server.banner)![1]!;
  const serviceKey = /service API key\s+(ak-\S+)/.exec(server.banner)![1]!;
  const env = { PLATFORM_DATA_DIR: dataDir, PLATFORM_API_URL: `http://api.localhost:${server.port}`, PLATFORM_API_KEY: userKey };
  const archive = await npack([
    { name: 'calc.wasm', body: Buffer.from(await buildComponent({ wit: CALC_WIT, world: 'calc', wat: CALC_WAT })) },
    { name: 'platform.yaml', body: 'schema_version: "1.0"\nmetadata: { name: test-calc }' },
  ]);
  const calcArchive = path.join(dataDir, 'test-calc.npack');
  writeFileSync(calcArchive, archive);
  return {
    server,
    env,
    serviceKey,
    dataDir,
    calcArchive,
    async close() {
      server.child.kill('SIGTERM');
      await server.stopped;
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
