// The entry of a sandbox thread (threads.ts). Plain JavaScript: worker threads do not go through the TypeScript loader.
// The thread runs one call at a time: it parks on its doorbell (the REQUESTS word of its shared block), takes the call
// off its port, runs it (worker.mjs), posts the reply and rings the REPLIES word, which the main thread may be watching.
//
// Before it parks, it may spin a little for the next call: waking a parked thread costs 30-100 us on a small VM (the
// hypervisor's cost), more than a call. It spins only while spinning pays, and only one thread at a time, so the core
// it burns is never one the node's loop needs for long:
// - only while the last spin caught a call: calls that come back to back (a caller that calls again as soon as it has
//   its answer; a queue that refills the thread) keep it spinning; calls further apart than the spin (an MCP request
//   at one connection comes every 600-900 us) stop it, and it tries again after twice as many parks, up to MAX_BACKOFF;
// - only the thread that holds the shared SPINNER word (threads.ts gives every thread the same block), and only while
//   the node's loop has time to spare and no more threads have calls than leave it a core (the MAY_SPIN word, kept by
//   the main thread): a gateway whose loop is its limit (16 connections) gives its core to no spinner.
// On a 2-core VM the sandbox-call bench at one call in flight went from 7,000-15,000 calls/s (p50 60-130 us) to
// 37,000-65,000 (p50 12-13 us); at 64 in flight, and mcp-call at 16 connections and at one, it stayed within the VM's
// run-to-run spread.
import { receiveMessageOnPort, workerData } from 'node:worker_threads';
import { spinFor } from './spin-for.mjs';
import { AWAKE, MAY_SPIN, REPLIES, REQUESTS, SPINNER, SPINS } from './thread-words.mjs';
import invoke from './worker.mjs';

// How long a spin lasts, and the most parks a miss puts before the next try (threads.ts).
const { port, control, spinner, threadSpin } = workerData;
const { ms: SPIN_MS, maxBackoff: MAX_BACKOFF } = threadSpin;
const words = new Int32Array(control);
const shared = new Int32Array(spinner);
let seen = 0;
// Parks left before the next try at spinning, and how many the last miss set.
let skip = 0;
let backoff = 0;

/** A call was posted since the thread last looked (true), or not yet (undefined: spinFor's "keep trying"). */
const posted = () => (Atomics.load(words, REQUESTS) !== seen ? true : undefined);

/** Spins up to SPIN_MS for a call to be posted; true if one was. */
function spin() {
  if (skip > 0) {
    skip--;
    return false;
  }
  if (Atomics.load(shared, MAY_SPIN) === 0 || Atomics.compareExchange(shared, SPINNER, 0, 1) !== 0) return false;
  Atomics.add(words, SPINS, 1);
  const caught = spinFor(performance.now(), SPIN_MS, posted).found !== undefined;
  Atomics.store(shared, SPINNER, 0);
  backoff = caught ? 0 : Math.min(MAX_BACKOFF, Math.max(1, backoff * 2));
  skip = backoff;
  return caught;
}

/** Waits for the next call; true if the thread parked and was woken for it. */
function park() {
  const woken = !spin() && Atomics.wait(words, REQUESTS, seen) === 'ok';
  seen = Atomics.load(words, REQUESTS);
  return woken;
}

async function serve() {
  for (;;) {
    let woken = park();
    // Messages are read after `seen` is updated, so a call posted meanwhile is never missed.
    let entry;
    while ((entry = receiveMessageOnPort(port)) !== undefined) {
      // A call taken without a wake-up: caught while spinning, or posted before the thread was done with the last.
      if (!woken) Atomics.add(words, AWAKE, 1);
      woken = false;
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
