import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import type { FuncType } from '../plugins/component-reflect.ts';
import { camel, fromGuest, toGuest } from './values.ts';

export const WORKER_FILE = fileURLToPath(new URL('./worker.mjs', import.meta.url));

/** A compiled, ready-to-call version: its JS glue and its (memory-capped) core modules. */
export interface LoadedArtifacts {
  key: string;
  glue: Uint8Array;
  modules: Record<string, unknown>;
}

export type InvokeOutcome =
  | { ok: true; value: unknown }
  | { ok: false; kind: 'component-error'; payload: unknown; message: string }
  | { ok: false; kind: 'timeout' | 'trap' | 'exit' | 'instantiate' | 'error'; message: string };

interface WorkerReply {
  ok: boolean;
  value?: unknown;
  kind?: string;
  message?: string;
  payload?: unknown;
}

const Wasm = (globalThis as unknown as { WebAssembly: { Module: new (b: Uint8Array) => unknown } }).WebAssembly;

/**
 * Piscina worker threads that run plugin calls. A call past its timeout is aborted by terminating its worker (the
 * only way to stop a wasm loop); Piscina replaces the worker and other calls go on. Wasm linear memory is capped in
 * the modules themselves (see memory-cap.ts); the JS heap of each worker is capped here.
 */
export function createSandbox(opts: { minThreads?: number; maxThreads?: number; maxHeapMb?: number } = {}) {
  // Workers start on the first call: a node that never runs a plugin spends nothing on them.
  let piscina: Piscina | null = null;
  const pool = () =>
    (piscina ??= new Piscina({
      filename: WORKER_FILE,
      minThreads: opts.minThreads ?? 1,
      maxThreads: opts.maxThreads ?? 2,
      resourceLimits: { maxOldGenerationSizeMb: opts.maxHeapMb ?? 128 },
    }));
  const compiled = new Map<string, LoadedArtifacts>();

  return {
    loaded: (key: string) => compiled.get(key),
    /** Compiles the artifacts once per process (a compiled module is shared with workers without recompiling). */
    load(key: string, files: Record<string, Uint8Array>): LoadedArtifacts {
      let a = compiled.get(key);
      if (!a) {
        const modules: Record<string, unknown> = {};
        for (const [name, bytes] of Object.entries(files)) if (name.endsWith('.wasm')) modules[name] = new Wasm.Module(bytes);
        const glue = files['plugin.js'];
        if (!glue) throw new Error(`artifacts ${key} have no plugin.js`);
        compiled.set(key, (a = { key, glue, modules }));
      }
      return a;
    },
    async invoke(a: LoadedArtifacts, call: { export: string; signature: FuncType; args: Record<string, unknown>; env: [string, string][]; timeoutMs: number }): Promise<InvokeOutcome> {
      const [iface, func] = call.export.includes('#') ? (call.export.split('#') as [string, string]) : [null, call.export];
      const args = call.signature.params.map(([name, t]) => toGuest(call.args[name] ?? null, t));
      let reply: WorkerReply;
      try {
        reply = await pool().run(
          { key: a.key, glue: a.glue, modules: a.modules, iface, func: camel(func), args, env: call.env, envKey: JSON.stringify(call.env) },
          { signal: AbortSignal.timeout(call.timeoutMs) },
        );
      } catch (err) {
        if ((err as Error).name === 'AbortError' || /abort/i.test((err as Error).message)) {
          return { ok: false, kind: 'timeout', message: `the call ran past its ${call.timeoutMs} ms limit and was stopped` };
        }
        return { ok: false, kind: 'trap', message: (err as Error).message };
      }
      const result = call.signature.result;
      if (reply.ok) {
        if (result !== null && typeof result === 'object' && 'result' in result) {
          return { ok: true, value: result.result.ok === null ? null : fromGuest(reply.value, result.result.ok) };
        }
        return { ok: true, value: result === null ? null : fromGuest(reply.value, result) };
      }
      if (reply.kind === 'component-error') {
        const errType = result !== null && typeof result === 'object' && 'result' in result ? result.result.err : null;
        const payload = errType === null ? null : fromGuest(reply.payload, errType);
        return { ok: false, kind: 'component-error', payload, message: typeof payload === 'string' ? payload : JSON.stringify(payload) };
      }
      return { ok: false, kind: (reply.kind ?? 'error') as 'trap', message: reply.message ?? 'the call failed' };
    },
    stats: () => ({ threads: piscina?.threads.length ?? 0, queued: piscina?.queueSize ?? 0, completed: piscina?.completed ?? 0 }),
    close: async () => {
      await piscina?.destroy();
      piscina = null;
    },
  };
}

export type Sandbox = ReturnType<typeof createSandbox>;
