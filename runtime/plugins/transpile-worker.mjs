// Transpiles one component off the node's main thread, caps its core modules' memories and hashes every file:
// jco's transpiler is synchronous WebAssembly and takes seconds for a large component, and capping and hashing a
// module the tenant built large would take the node's loop too. Plain JavaScript: a thread per activation starts
// without a TypeScript loader.
import { createHash } from 'node:crypto';
import { parentPort, workerData } from 'node:worker_threads';
import { transpileBytes } from '@bytecodealliance/jco-transpile';
import { capMemory } from '../core/wasm/index.mjs';
import { runInBackground } from '../core/workers/index.mjs';

runInBackground();

try {
  const { files } = await transpileBytes(workerData.wasm, workerData.options);
  const out = {};
  const transfer = [];
  for (const [name, raw] of Object.entries(files)) {
    if (name.endsWith('.d.ts')) continue;
    const bytes = name.endsWith('.wasm') ? capMemory(raw, workerData.maxPages) : raw;
    out[name] = { bytes, hash: createHash('sha256').update(bytes).digest('hex') };
    if (bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength) transfer.push(bytes.buffer);
  }
  parentPort.postMessage({ ok: true, files: out }, transfer);
} catch (err) {
  parentPort.postMessage({ ok: false, message: String(err?.message ?? err) });
}
