import { existsSync, mkdirSync, openSync, closeSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import path from 'node:path';

/**
 * Files a node keeps in its data directory beside the embedded database:
 * - `node.json` (mode 0600): the running server's pid, local URL and operator token, so `platform admin` can route
 *   through it while it holds the embedded database;
 * - `pglite.lock`: which process holds the embedded database (PGlite allows one process at a time).
 */
export interface NodeFile {
  pid: number;
  url: string;
  /** The management API's public URL (what the CLI calls when nothing else names one). */
  api_url?: string;
  operator_token: string;
  started_at: string;
}

export const pgliteDir = (dataDir: string) => path.join(dataDir, 'pgdata');
/** The embedded database's blobs, as files named by their hash beside it. */
export const blobDir = (dataDir: string) => path.join(dataDir, 'blobs');
const nodeFilePath = (dataDir: string) => path.join(dataDir, 'node.json');
const lockPath = (dataDir: string) => path.join(dataDir, 'pglite.lock');

/** Whether the data directory holds an embedded database already (a directory without one starts empty). */
export const hasEmbeddedDb = (dataDir: string) => existsSync(path.join(pgliteDir(dataDir), 'PG_VERSION'));

export function ensureDataDir(dataDir: string) {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function readNodeFile(dataDir: string): NodeFile | null {
  try {
    const f = JSON.parse(readFileSync(nodeFilePath(dataDir), 'utf8')) as NodeFile;
    return typeof f.pid === 'number' && isAlive(f.pid) ? f : null;
  } catch {
    return null;
  }
}

export function writeNodeFile(dataDir: string, f: NodeFile) {
  writeFileSync(nodeFilePath(dataDir), JSON.stringify(f, null, 2), { mode: 0o600 });
}

export function removeNodeFile(dataDir: string) {
  rmSync(nodeFilePath(dataDir), { force: true });
}

/** Takes the embedded-database lock for this process, clearing a lock left by a process that died. */
export function lockEmbeddedDb(dataDir: string): () => void {
  const file = lockPath(dataDir);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, 'wx', 0o600);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(file, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = Number(readFileSync(file, 'utf8'));
      if (Number.isInteger(holder) && holder > 0 && isAlive(holder)) {
        throw new Error(`the embedded database in ${dataDir} is in use by process ${holder} (PGlite allows one process); stop it or set DATABASE_URL`);
      }
      rmSync(file, { force: true });
    }
  }
  throw new Error(`could not lock the embedded database in ${dataDir}`);
}
