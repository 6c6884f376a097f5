// Worker threads that do what a tenant's input makes costly (admitting uploads, transpiling components) yield the
// CPU to the node's event loop: on a machine with few cores, three busy threads would otherwise take turns with the
// loop and every request would wait its turn. Linux gives each thread its own nice value; elsewhere the call would
// lower the whole process, so it is made only where the thread can be named.
import { readlinkSync } from 'node:fs';
import os from 'node:os';

/** Nice value of background threads: below the event loop's, above nothing else of ours. */
export const BACKGROUND_NICE = 10;

/** Lowers the calling thread's scheduling priority (Linux only; a no-op elsewhere or when not permitted). */
export function runInBackground() {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isSafeInteger(tid) && tid > 0) os.setPriority(tid, BACKGROUND_NICE);
  } catch {
    // Not Linux, or no /proc: the thread keeps the process's priority.
  }
}
