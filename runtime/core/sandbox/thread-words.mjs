// The layout of the shared memory between the main thread (threads.ts) and its sandbox threads (thread-entry.mjs).
// Plain JavaScript, so that both sides read the same numbers: worker threads do not go through the TypeScript loader.

/**
 * A thread's own block: calls posted to it, replies it posted, calls it took without being woken from parked, and the
 * spins it began (the last two tell whether spinning pays).
 */
export const REQUESTS = 0;
export const REPLIES = 1;
export const AWAKE = 2;
export const SPINS = 3;
export const THREAD_WORDS = 4;

/**
 * The block every thread shares: the word a thread holds while it spins for its next call, then whether a thread may
 * spin at all (1) or not (0), which the main thread keeps current at every call (loop/spin-policy.ts' `threadsMaySpin`).
 */
export const SPINNER = 0;
export const MAY_SPIN = 1;
export const SHARED_WORDS = 2;
