import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { classifyDriverError, type Db, type Queryable, type QueryResult } from './db.ts';
import { hasCluster, prepareCluster, type SetupStep } from './pglite-cluster.ts';
import { REPLAN_MS, runNamed, statementNames } from './statement-names.ts';

/**
 * PGlite is Postgres compiled to WASM: the embedded default, so `npm start` needs no database server.
 *
 * It runs on a worker thread of this process (pglite-worker.mjs): PGlite executes each statement synchronously on the
 * thread that holds it, and one statement with a large value held the node's event loop for longer than the
 * main-thread budget allows (DESIGN §5). The node's thread only sends statements and values and receives rows; each
 * answer arrives as a message of its own, so a chain of statements gives the loop a turn between any two of them.
 * `dataDir` undefined keeps everything in memory (tests).
 */

/**
 * The settings the node adds to PGlite's start parameters: a smaller buffer pool. initdb sizes shared_buffers at
 * 128 MB, and PGlite's WebAssembly memory holds all of it whether or not it is used: most of the embedded database's
 * share of a node's memory at rest. An embedded database is small and its files stay in the OS page cache, so a page
 * that leaves the pool is read back in microseconds.
 */
export const PGLITE_START_PARAMS: readonly string[] = ['-c', 'shared_buffers=16MB'];

const WORKER = fileURLToPath(new URL('./pglite-worker.mjs', import.meta.url));

/**
 * PostgreSQL's WebAssembly, compiled on this thread and handed to the database thread. Compiled there, it waited for the
 * thread to boot and load PGlite, and an asynchronous compile here waited for this thread to finish loading the node:
 * either way some 300 ms on a 2-core machine before PostgreSQL could boot. Compiled synchronously (about 70 ms: V8
 * compiles the functions lazily), it is ready before the thread is. That happens at a node's start or a store's
 * set-up, never during a request. A compiled module crosses threads without being compiled again, so a process
 * compiles it once. Null when it could not be read or compiled here: the thread then compiles it, and reports what
 * fails.
 */
let postgres: object | null | undefined;
function compilePostgres(): object | null {
  // The typings of this project declare no WebAssembly global (no DOM library); Node has it.
  const wasm = (globalThis as unknown as { WebAssembly: { Module: new (bytes: Uint8Array) => object } }).WebAssembly;
  try {
    postgres ??= new wasm.Module(readFileSync(createRequire(import.meta.url).resolve('@electric-sql/pglite/pglite.wasm')));
  } catch {
    postgres = null;
  }
  return postgres;
}

export interface PgliteOptions {
  /** Where a fresh cluster is kept for later data directories (see pglite-cluster.ts); null: none is kept or used. */
  templateDir?: string | null;
  /**
   * Scripts a new cluster in `dataDir` gets before it opens (the migrations), and its template with it. A promise may
   * be passed: the thread starts first, the scripts are read meanwhile.
   */
  setup?: readonly SetupStep[] | Promise<readonly SetupStep[]>;
  /** The clock of the re-planning period (REPLAN_MS); Date.now by default. A test's own clock steps it. */
  now?: () => number;
}

type Answer = { id: number; ok: true; rows?: unknown[]; rowCount?: number } | { id: number; ok: false; error: Record<string, unknown> & { message: string } };
/**
 * `name`: run as that prepared statement (the thread prepares it on its first use); `replan`: drop the kept plans
 * first.
 */
type Request = { op: 'open' } | { op: 'query'; sql: string; params: readonly unknown[]; name?: string; replan?: boolean } | { op: 'exec'; sql: string } | { op: 'close' };

/** The database thread: requests go out numbered, answers settle them; a thread that stops fails what it still owes. */
function databaseThread(dataDir: string | undefined) {
  const worker = new Worker(WORKER, { workerData: { dataDir, startParams: PGLITE_START_PARAMS } });
  // Not a numbered request: the thread holds the database's opening until it has the module.
  worker.postMessage({ op: 'module', module: compilePostgres() });
  const pending = new Map<number, { resolve(a: Answer): void; reject(err: Error): void }>();
  let nextId = 1;
  let stopped: Error | null = null;
  const stop = (err: Error) => {
    stopped ??= err;
    for (const p of pending.values()) p.reject(stopped);
    pending.clear();
  };
  worker.on('message', (a: Answer) => {
    const p = pending.get(a.id);
    pending.delete(a.id);
    p?.resolve(a);
  });
  worker.on('error', (err) => stop(Object.assign(new Error(`the embedded database stopped: ${err.message}`), { cause: err })));
  worker.on('exit', (code) => stop(new Error(`the embedded database stopped (its thread exited with code ${code})`)));
  return {
    send(req: Request): Promise<Answer> {
      if (stopped) return Promise.reject(stopped);
      const id = nextId++;
      return new Promise<Answer>((resolve, reject) => {
        pending.set(id, { resolve, reject });
        worker.postMessage({ id, ...req });
      });
    },
    terminate: () => worker.terminate(),
  };
}

/** PostgreSQL's error as the worker sent it, with its fields (code, constraint, …) where callers read them. */
const rebuilt = (e: Record<string, unknown> & { message: string }) => Object.assign(new Error(e.message), e);

export async function openPglite(dataDir?: string, opts: PgliteOptions = {}): Promise<Db> {
  // Started first: the thread loads PGlite and compiles its WebAssembly while the data directory is prepared.
  const thread = databaseThread(dataDir);
  const call = async (req: Request) => {
    const a = await thread.send(req);
    if (!a.ok) throw rebuilt(a.error);
    return a;
  };
  // A data directory that already holds its cluster (every start after the first) is opened at once: the thread boots
  // PostgreSQL while this one reads the migrations and loads the rest of the node.
  const early = dataDir !== undefined && hasCluster(dataDir) ? call({ op: 'open' }) : null;
  early?.catch(() => {}); // awaited below; a failure meanwhile is not unhandled
  try {
    const setup = (await opts.setup) ?? [];
    if (dataDir && !early) await prepareCluster(dataDir, { templateDir: opts.templateDir ?? null, startParams: PGLITE_START_PARAMS, setup });
    await (early ?? call({ op: 'open' }));
  } catch (err) {
    await thread.terminate();
    throw err;
  }
  // One connection: a transaction's statements must not interleave with others, so calls are serialized here.
  let chain: Promise<unknown> = Promise.resolve();
  function serialized<T>(fn: () => Promise<T>): Promise<T> {
    const next = chain.then(fn, fn);
    chain = next.catch(() => {});
    return next;
  }
  // Statements seen twice run prepared: PGlite's own query() parses, analyzes and describes every statement anew, in
  // six calls into PostgreSQL; a prepared one is bound and executed in one. Measured on PGlite directly: `select 1`
  // 221 µs against 67, a row by its key 423 against 152, a one-row insert 426 against 189. Kept plans are dropped on
  // the first use after REPLAN_MS, as on PostgreSQL (pg-driver.ts says why); PGlite has no autovacuum to analyze the
  // tables, and the planner reads their sizes as they are.
  const names = statementNames();
  const clock = opts.now ?? Date.now;
  let replanAt = clock() + REPLAN_MS;
  let transactions = 0;
  const run = async <R>(sql: string, params: readonly unknown[], name: string | undefined) => {
    let replan = false;
    if (name && clock() >= replanAt) {
      replan = true;
      replanAt = clock() + REPLAN_MS;
    }
    return (await call({ op: 'query', sql, params, ...(name ? { name } : {}), ...(replan ? { replan } : {}) })) as { rows: R[]; rowCount: number };
  };
  const direct: Queryable = {
    async query<R>(sql: string, params: readonly unknown[] = []): Promise<QueryResult<R>> {
      try {
        const a = await runNamed(names, sql, transactions > 0, (name) => run<R>(sql, params, name));
        return { rows: a.rows, rowCount: a.rowCount };
      } catch (err) {
        throw classifyDriverError(err);
      }
    },
    async exec(sql: string): Promise<void> {
      await call({ op: 'exec', sql });
    },
  };
  async function inTransaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    await direct.exec('begin');
    transactions++;
    try {
      let result: T;
      try {
        result = await fn(direct);
      } catch (err) {
        await direct.exec('rollback').catch(() => {});
        throw err;
      }
      await direct.exec('commit');
      return result;
    } finally {
      transactions--;
    }
  }
  return {
    kind: 'pglite',
    query: (sql, params) => serialized(() => direct.query(sql, params)),
    exec: (sql) => serialized(() => direct.exec(sql)),
    transaction: (fn) => serialized(() => inTransaction(fn)),
    // One process holds the database, so serializing is the lock.
    withAdvisoryLock: (_key, fn) => serialized(() => fn(direct)),
    close: () =>
      serialized(async () => {
        await call({ op: 'close' }).catch(() => {});
        await thread.terminate();
      }),
  };
}
