import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { PGlite } from '@electric-sql/pglite';
import { classifyDriverError, normalizeRows, type Db, type Queryable, type QueryResult } from './db.ts';
import { prepareCluster, type SetupStep } from './pglite-cluster.ts';

/**
 * PGlite is Postgres compiled to WASM: the embedded default, so `npm start` needs no database server.
 * It runs in this process only; `dataDir` undefined keeps everything in memory (tests).
 */
/**
 * How long statements may follow each other on the event loop before one waits for the loop's next turn: long enough
 * that a busy node's short requests never pay the extra hop (at 8 ms the MCP bench lost a tenth of its throughput),
 * short enough that a chain of statements stays well inside the main-thread budget.
 */
const YIELD_AFTER_MS = 25;

/**
 * PGlite's own start parameters, with a smaller buffer pool. initdb sizes shared_buffers at 128 MB, and PGlite's
 * WebAssembly memory holds all of it whether or not it is used: most of the embedded database's share of a node's
 * memory at rest. An embedded database is small and its files stay in the OS page cache, so a page that leaves the
 * pool is read back in microseconds.
 */
export const PGLITE_START_PARAMS: readonly string[] = [...PGlite.defaultStartParams, '-c', 'shared_buffers=16MB'];

// The lib the project compiles against declares WebAssembly's types, not its global (as in sandbox.ts).
const Wasm = (globalThis as unknown as { WebAssembly: { compile(bytes: Uint8Array): Promise<WebAssembly.Module> } }).WebAssembly;

/** PostgreSQL's WebAssembly, compiled: started before a new cluster is made, it compiles while initdb runs. */
async function compilePglite(): Promise<WebAssembly.Module> {
  return Wasm.compile(await readFile(createRequire(import.meta.url).resolve('@electric-sql/pglite/pglite.wasm')));
}

export interface PgliteOptions {
  /** Where a fresh cluster is kept for later data directories (see pglite-cluster.ts); null: none is kept or used. */
  templateDir?: string | null;
  /** Scripts a new cluster in `dataDir` gets before it opens (the migrations), and its template with it. */
  setup?: readonly SetupStep[];
}

export async function openPglite(dataDir?: string, opts: PgliteOptions = {}): Promise<Db> {
  // int8 as decimal strings, as node-postgres returns them: the two drivers must agree on every shape.
  const parsers = { 20: (v: string) => v };
  const startParams = [...PGLITE_START_PARAMS];
  let pgliteWasmModule: WebAssembly.Module | undefined;
  if (dataDir) {
    const compiling = compilePglite();
    // Settled here, so a failed start leaves no rejection behind.
    const compiled = compiling.catch(() => undefined);
    await prepareCluster(dataDir, { templateDir: opts.templateDir ?? null, startParams, setup: opts.setup ?? [] });
    pgliteWasmModule = await compiled;
  }
  const db = await PGlite.create({ ...(dataDir ? { dataDir } : {}), parsers, startParams, ...(pgliteWasmModule ? { pgliteWasmModule } : {}) });
  // PGlite has a single connection: transactions must not interleave with other queries, so calls are serialized.
  let chain: Promise<unknown> = Promise.resolve();
  function serialized<T>(fn: () => Promise<T>): Promise<T> {
    const next = chain.then(fn, fn);
    chain = next.catch(() => {});
    return next;
  }
  /** When the event loop last started the task these statements run in (null: no statement ran since it turned). */
  let heldSince: number | null = null;
  type Conn = Pick<PGlite, 'query' | 'exec'>;
  const raw = (q: Conn): Queryable => ({
    async query<R>(sql: string, params: readonly unknown[] = []): Promise<QueryResult<R>> {
      // PGlite answers on this thread and its promises settle without I/O: a chain of statements (an actor turn's
      // commit, turns that follow each other) would otherwise run as one long block that no request or timer can
      // interrupt. A statement that finds the loop held for a slice already waits for its next turn first; one
      // that does not goes straight on, so short requests pay no extra hop.
      if (heldSince === null) {
        heldSince = performance.now();
        // The loop's next turn ends the slice: this runs once the current task and its promise chain are done.
        setImmediate(() => (heldSince = null));
      } else if (performance.now() - heldSince > YIELD_AFTER_MS) {
        await nextTurn();
      }
      try {
        const res = await q.query<R>(sql, params as unknown[]);
        return { rows: normalizeRows(res.rows), rowCount: res.affectedRows ?? res.rows.length };
      } catch (err) {
        throw classifyDriverError(err);
      }
    },
    async exec(sql: string): Promise<void> {
      await q.exec(sql);
    },
  });
  const direct = raw(db);
  const transaction = <T>(fn: (tx: Queryable) => Promise<T>) =>
    serialized(() => db.transaction((tx) => fn(raw(tx as unknown as Conn))));
  return {
    kind: 'pglite',
    query: (sql, params) => serialized(() => direct.query(sql, params)),
    exec: (sql) => serialized(() => direct.exec(sql)),
    transaction,
    // One process holds the database, so serializing is the lock.
    withAdvisoryLock: (_key, fn) => serialized(() => fn(direct)),
    close: () => serialized(() => db.close()),
  };
}
