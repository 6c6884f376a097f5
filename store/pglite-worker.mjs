// The embedded database's thread (see pglite-driver.ts): PGlite, PostgreSQL compiled to WebAssembly, runs every
// statement synchronously on the thread that holds it. On the main thread one statement with a large value (a 1 MiB
// message: PGlite's serializer, the WASM parse of the JSON, the write) held the event loop for 60-130 ms, and nothing
// between the statements of a chain can break one statement up. Here the statements run on a thread of their own and
// the node's loop only copies values in and rows out. Started without the TypeScript loader: it loads PGlite only.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { parentPort, workerData } from 'node:worker_threads';
import { parse, PGlite, protocol } from '@electric-sql/pglite';

const { serialize } = protocol;

// startParams: the settings the node adds to PGlite's own start parameters.
const { dataDir, startParams } = workerData;

// PostgreSQL's WebAssembly arrives compiled from the parent, which began while this thread booted (pglite-driver.ts);
// if the parent could not compile it, this thread does, so the error it reports is its own.
let arrived;
const compiled = new Promise((resolve) => (arrived = resolve)).then(
  (module) => module ?? readFile(createRequire(import.meta.url).resolve('@electric-sql/pglite/pglite.wasm')).then((bytes) => WebAssembly.compile(bytes)),
);
compiled.catch(() => {});

/** @type {PGlite | undefined} */
let db;
/** The statements prepared on `db`: name → the type ids of its parameters (which pick their serializers). */
const prepared = new Map();

/** Protocol messages as one buffer: PostgreSQL takes them in one call. */
function joined(parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/**
 * Runs prepared statement `name` (preparing it from `sql` on its first use), as PGlite's query() runs a statement but
 * without parsing, analyzing and describing it again: bind, describe the portal (its rows' shape), execute and sync
 * go to PostgreSQL in one call. Parameters are serialized and rows parsed as query() does, so both ways answer alike.
 */
async function runPrepared(name, sql, params) {
  const res = await db.runExclusive(async () => {
    let types = prepared.get(name);
    if (!types) {
      const described = await db.execProtocol(joined([serialize.parse({ name, text: sql }), serialize.describe({ type: 'S', name }), serialize.sync()]), { syncToFs: false });
      types = described.messages.find((m) => m.name === 'parameterDescription')?.dataTypeIDs ?? [];
      prepared.set(name, types);
    }
    const values = params.map((v, i) => {
      if (v === null || v === undefined) return null;
      const serializer = db.serializers[types[i]];
      return serializer ? serializer(v) : v.toString();
    });
    const { messages } = await db.execProtocol(joined([serialize.bind({ statement: name, values }), serialize.describe({ type: 'P' }), serialize.execute({}), serialize.sync()]), { syncToFs: false });
    return parse.parseResults(messages, db.parsers)[0];
  });
  await db.syncToFs();
  return res;
}

/** Both drivers return rows in one shape: timestamps as ISO 8601 UTC strings, int8 as decimal strings (db.ts). */
function normalize(rows) {
  for (const row of rows) {
    for (const key of Object.keys(row)) {
      const v = row[key];
      if (v instanceof Date) row[key] = v.toISOString();
      else if (typeof v === 'bigint') row[key] = v.toString();
    }
  }
  return rows;
}

/** An error as plain fields: structured cloning keeps an Error's message only, and callers read PostgreSQL's fields. */
function plain(err) {
  if (!(err instanceof Error)) return { message: String(err) };
  const out = { name: err.name, message: err.message };
  for (const key of ['code', 'detail', 'hint', 'constraint', 'table', 'column', 'schema', 'severity', 'position', 'where']) {
    if (err[key] !== undefined) out[key] = err[key];
  }
  return out;
}

async function handle(msg) {
  switch (msg.op) {
    case 'open': {
      const pgliteWasmModule = await compiled;
      // int8 as decimal strings, as node-postgres returns them.
      db = await PGlite.create({ ...(dataDir ? { dataDir } : {}), startParams: [...PGlite.defaultStartParams, ...startParams], parsers: { 20: (v) => v }, pgliteWasmModule });
      return {};
    }
    case 'query': {
      if (msg.replan) await db.exec('discard plans');
      const res = msg.name ? await runPrepared(msg.name, msg.sql, msg.params) : await db.query(msg.sql, msg.params);
      return { rows: normalize(res.rows), rowCount: res.affectedRows ?? res.rows.length };
    }
    case 'exec':
      await db.exec(msg.sql);
      return {};
    case 'close':
      prepared.clear();
      await db?.close();
      db = undefined;
      return {};
    default:
      throw new Error(`unknown operation ${msg.op}`);
  }
}

// PGlite has one connection: requests run one after another, in the order they came, each answered on its own.
let chain = Promise.resolve();
parentPort.on('message', (msg) => {
  if (msg.op === 'module') return arrived(msg.module);
  chain = chain.then(async () => {
    try {
      parentPort.postMessage({ id: msg.id, ok: true, ...(await handle(msg)) });
    } catch (err) {
      parentPort.postMessage({ id: msg.id, ok: false, error: plain(err) });
    }
  });
});
