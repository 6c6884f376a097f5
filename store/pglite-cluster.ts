import { fork } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { constants, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, rmdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The embedded database's cluster for a data directory that has none yet: initdb's work plus the schema.
 *
 * PGlite runs initdb inside the process that opens the database, and the instance it opens afterwards keeps what
 * initdb used reachable: a first start held about 430 MB more than a second one, for as long as the node ran. Here
 * initdb runs in a process of its own that exits once the cluster is on disk. (A worker thread freed its JavaScript
 * and WebAssembly memory, but the memory allocator kept about 100 MB of what the thread had used.)
 *
 * initdb and the migrations are most of a first start's work (seconds of WebAssembly), and their result is the same
 * every time for one PGlite build, one set of start parameters and one set of migrations. So a fresh cluster is also
 * kept as a template, and later data directories start from a copy of it. A template holds the schema and no rows
 * (migrations on an empty database insert none; one that generated a value for each installation, a secret or a
 * random id, would hand the same value to every copy: such values belong in start-up code, as the JWT secret is).
 * Clusters copied from one template share their system identifier, which only replication would notice, and PGlite
 * has none.
 */

const INITDB_PROCESS = fileURLToPath(new URL('./pglite-initdb-process.mjs', import.meta.url));
/** initdb and the migrations take seconds; a process that takes this long is stuck. */
const INITDB_TIMEOUT_MS = 5 * 60_000;

export type ClusterSource = 'existing' | 'template' | 'initdb';

/** A script run once on a new cluster (the migrations), named for the error it fails with. */
export interface SetupStep {
  name: string;
  sql: string;
}

const require = createRequire(import.meta.url);
/** The installed PGlite package's root (its entry point is dist/index.cjs). */
const PGLITE_ROOT = path.resolve(path.dirname(require.resolve('@electric-sql/pglite')), '..');
const PGLITE_VERSION = (JSON.parse(readFileSync(path.join(PGLITE_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
/** Staging copies older than this were left by a process that died while publishing. */
const STALE_STAGING_MS = 60 * 60_000;

/** Whether `dir` holds a whole cluster (initdb finished there). */
export const hasCluster = (dir: string) => existsSync(path.join(dir, 'PG_VERSION'));
/** A copy that is a copy-on-write clone where the filesystem makes one (btrfs, XFS, APFS), a plain copy elsewhere. */
const copyTree = (from: string, to: string) => cpSync(from, to, { recursive: true, mode: constants.COPYFILE_FICLONE });
const suffix = () => randomBytes(4).toString('hex');

/**
 * A template is only valid for the PGlite build, start parameters and setup scripts that made it. `startParams` are
 * the settings the node adds to PGlite's own (which belong to its build).
 */
export function templatePath(templateDir: string, startParams: readonly string[], setup: readonly SetupStep[]): string {
  const key = createHash('sha256')
    .update(JSON.stringify([PGLITE_VERSION, startParams, setup.map((s) => s.sql)]))
    .digest('hex')
    .slice(0, 16);
  return path.join(templateDir, `pglite-${PGLITE_VERSION}-${key}`);
}

/**
 * Makes sure `dataDir` holds a cluster: the one already there, a copy of the template, or a new one made by initdb
 * and `setup` in a process of its own (kept as the template when `templateDir` is set). A directory that exists with files
 * but no cluster (an initdb PGlite itself was interrupted in) is left for PGlite to finish, as before. The caller
 * holds the data directory's lock.
 */
export async function prepareCluster(dataDir: string, opts: { templateDir: string | null; startParams: readonly string[]; setup: readonly SetupStep[] }): Promise<ClusterSource> {
  if (hasCluster(dataDir)) return 'existing';
  if (existsSync(dataDir)) {
    if (readdirSync(dataDir).length > 0) return 'existing';
    rmdirSync(dataDir);
  }
  removeLeftovers(path.dirname(dataDir), (name) => name.startsWith(`${path.basename(dataDir)}.`));
  const template = opts.templateDir ? templatePath(opts.templateDir, opts.startParams, opts.setup) : null;
  if (template && hasCluster(template)) {
    // Copied beside the target and renamed into place: a start that dies mid-copy leaves no half cluster behind.
    const copy = `${dataDir}.copy-${suffix()}`;
    try {
      copyTree(template, copy);
      renameSync(copy, dataDir);
      return 'template';
    } catch {
      // The template was pruned while it was read (a newer one replaced it): make the cluster instead.
      rmSync(copy, { recursive: true, force: true });
    }
  }
  const fresh = `${dataDir}.initdb-${suffix()}`;
  try {
    await initdbInProcess(fresh, opts);
    if (template) publishTemplate(fresh, template);
    renameSync(fresh, dataDir);
  } finally {
    rmSync(fresh, { recursive: true, force: true });
  }
  return 'initdb';
}

/** Keeps a copy of a fresh cluster as the template; best effort (a read-only cache only costs later starts time). */
function publishTemplate(cluster: string, template: string) {
  const staging = `${template}.staging-${suffix()}`;
  try {
    mkdirSync(path.dirname(template), { recursive: true });
    copyTree(cluster, staging);
    // Appears whole or not at all; a node that published the same template first wins.
    if (!hasCluster(template)) renameSync(staging, template);
    // Templates of other PGlite builds or migrations will not be used again: 40 MB each.
    removeLeftovers(path.dirname(template), (name) => name.startsWith('pglite-') && name !== path.basename(template) && !name.startsWith(`${path.basename(template)}.staging-`));
  } catch {
    // Not writable, or published meanwhile by another node: the next first start runs initdb again, nothing else.
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

/**
 * Removes the entries of `dir` that `match`, each renamed away first so that a process copying it fails at once
 * instead of copying part of it. Staging copies are spared until they are stale (another node may be writing one).
 */
function removeLeftovers(dir: string, match: (name: string) => boolean) {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names.filter(match)) {
    const entry = path.join(dir, name);
    try {
      if (name.includes('.staging-') && Date.now() - statSync(entry).mtimeMs < STALE_STAGING_MS) continue;
      const doomed = name.includes('.trash-') ? entry : `${entry}.trash-${suffix()}`;
      if (doomed !== entry) renameSync(entry, doomed);
      rmSync(doomed, { recursive: true, force: true });
    } catch {
      // Gone already, or another process is removing it.
    }
  }
}

function initdbInProcess(dataDir: string, opts: { startParams: readonly string[]; setup: readonly SetupStep[] }): Promise<void> {
  return new Promise((resolve, reject) => {
    // Without the parent's --import hooks and flags: the process needs PGlite alone.
    const child = fork(INITDB_PROCESS, [], { execArgv: [], stdio: ['ignore', 'ignore', 'pipe', 'ipc'], timeout: INITDB_TIMEOUT_MS });
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
    let reply: { ok: boolean; step?: string; message?: string } | null = null;
    child.once('message', (m: typeof reply) => (reply = m));
    child.once('error', (err) => reject(new Error(`initdb of the embedded database could not start: ${err.message}`, { cause: err })));
    child.once('exit', (code, signal) => {
      const r = reply as typeof reply;
      if (r?.ok) resolve();
      // The same error a migration failing in migrate() gives.
      else if (r?.step) reject(new Error(`migration ${r.step} failed: ${r.message}`));
      else reject(new Error(`initdb of the embedded database failed: ${r?.message ?? `exit ${signal ?? code}`}${stderr ? `\n${stderr.trim()}` : ''}`));
    });
    child.send({ dataDir, startParams: [...opts.startParams], setup: [...opts.setup] });
  });
}
