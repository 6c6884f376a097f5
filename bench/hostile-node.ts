// A platform node for the hostile-upload scenario, as its own process: it starts (PGlite, or the PostgreSQL of
// DATABASE_URL), creates a bystander tenant beside the demo one, prints one JSON line with the URL and both
// tenants' keys, and runs until SIGTERM.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { startPlatform } from '../bin/node.ts';
import { loadConfig } from '../runtime/index.ts';

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'bench-hostile-'));
const config = loadConfig({ ...process.env, PORT: '0', LOG_LEVEL: 'silent', PLATFORM_DATA_DIR: dataDir, PLATFORM_SEED_DEMO: 'true', PLATFORM_SHUTDOWN_GRACE_MS: '1000' });
const node = await startPlatform({ config, logger: pino({ level: 'silent' }), writeNodeFile: false });
const admin = node.services.admin;
const other = await admin.createAccount({ name: 'Bystander' });
const principal = await admin.createPrincipal({ account: other.id, name: 'bystander', role: 'admin' });
const bystanderKey = (await admin.createKey({ principal: principal.id })).key;
process.stdout.write(`${JSON.stringify({ url: node.edge.localUrl, attackerKey: node.demo!.userKey, bystanderKey, driver: config.databaseUrl ? 'pg' : 'pglite' })}\n`);

process.once('SIGTERM', () => {
  void node.close().finally(() => {
    rmSync(dataDir, { recursive: true, force: true });
    process.exit(0);
  });
});
