// The entry of a sandbox thread (threads.ts). Plain JavaScript: worker threads do not go through the TypeScript loader.
// The thread runs one call at a time: it parks on its doorbell (the REQUESTS word of its shared block), takes the call
// off its port, runs it (worker.mjs), posts the reply and rings the REPLIES word, which the main thread may be watching.
// It does not spin before it parks: on a small machine, the core it would burn is the one the node's loop needs.
import { receiveMessageOnPort, workerData } from 'node:worker_threads';
import invoke from './worker.mjs';

const REQUESTS = 0;
const REPLIES = 1;
const { port, control } = workerData;
const words = new Int32Array(control);
let seen = 0;

function park() {
  Atomics.wait(words, REQUESTS, seen);
  seen = Atomics.load(words, REQUESTS);
}

async function serve() {
  for (;;) {
    park();
    // Messages are read after `seen` is updated, so a call posted meanwhile is never missed.
    let entry;
    while ((entry = receiveMessageOnPort(port)) !== undefined) {
      let reply;
      try {
        reply = await invoke(entry.message);
      } catch (err) {
        reply = { ok: false, kind: 'error', message: String(err?.message ?? err) };
      }
      port.postMessage(reply);
      Atomics.add(words, REPLIES, 1);
      Atomics.notify(words, REPLIES);
    }
  }
}

port.postMessage({ ready: true });
// Parked only once this module has finished loading (Atomics.wait blocks the thread's event loop).
setImmediate(serve);
