import type { runJavascript as run } from './quickjs-task.ts';

/**
 * QuickJS on the calling thread (benches and tests; the node runs code in the task pool, code-runner.ts). The engine
 * loads with the first call: a node that never calls this never loads it.
 */
export const runJavascript: typeof run = async (...args) => (await import('./quickjs-task.ts')).runJavascript(...args);
