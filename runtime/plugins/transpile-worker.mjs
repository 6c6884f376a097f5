// Transpiles one component off the node's main thread: jco's transpiler is synchronous WebAssembly and takes
// seconds for a large component, during which the node could answer nothing else.
import { parentPort, workerData } from 'node:worker_threads';
import { transpileBytes } from '@bytecodealliance/jco-transpile';

try {
  const { files } = await transpileBytes(workerData.wasm, workerData.options);
  parentPort.postMessage({ ok: true, files });
} catch (err) {
  parentPort.postMessage({ ok: false, message: String(err?.message ?? err) });
}
