import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/**
 * What the optional suites need, and why they would skip. In CI (`CI=true`) nothing may skip: a missing service
 * fails the suite instead, so a green CI always means everything ran.
 */
export const DATABASE_URL = process.env.DATABASE_URL;
export const NATS_URL = process.env.NATS_URL;
export const NATS_SERVER = process.env.NATS_SERVER_PATH ?? '/usr/sbin/nats-server';
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export const CONFORMANCE_DIR = path.resolve(import.meta.dirname, '../../tools/conformance');

export const skipReasons = {
  conformance: existsSync(path.join(CONFORMANCE_DIR, 'node_modules/.bin/node'))
    ? null
    : 'the MCP conformance suite is not installed (npm ci --prefix tools/conformance; .ci/run does it)',
  postgres: DATABASE_URL ? null : 'DATABASE_URL is not set (PostgreSQL suites run on PGlite only)',
  chromium: existsSync(CHROMIUM) ? null : `no Chromium at ${CHROMIUM} (apt-get install chromium)`,
  // run_python runs in an empty network namespace: root makes one, other users through a user namespace.
  python: spawnSync('unshare', [...(process.getuid?.() === 0 ? [] : ['--map-root-user']), '--net', 'true']).status === 0 ? null : 'this machine cannot make a network namespace (unshare --net), which run_python runs in',
  cluster:
    DATABASE_URL && NATS_URL && existsSync(NATS_SERVER)
      ? null
      : 'the cluster suites need DATABASE_URL, NATS_URL and a nats-server binary (NATS_SERVER_PATH, default /usr/sbin/nats-server)',
};

export function mustRun(what: keyof typeof skipReasons): boolean {
  const reason = skipReasons[what];
  if (reason && process.env.CI === 'true') throw new Error(`CI requires the ${what} suites, but ${reason}`);
  return reason === null;
}
