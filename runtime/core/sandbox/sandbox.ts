import { availableParallelism } from 'node:os';
import { createHash } from 'node:crypto';
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import type { FuncType } from '../wasm/index.ts';
import { definedMemories } from '../wasm/index.ts';
import { camel, fromGuest, toGuest } from './values.ts';
import type { HotLoop, SpinPolicy } from '../loop/index.ts';
import { createSandboxThreads, type SandboxThreads } from './threads.ts';
import { createWatchdog } from './watchdog.ts';

/** A compiled, ready-to-call version: its JS glue and its (memory-capped) core modules. */
export interface LoadedArtifacts {
  key: string;
  glue: Uint8Array;
  modules: Record<string, unknown>;
  /** The component imports wasi:keyvalue, so its calls need a bridge to the tenant's store. */
  usesKeyValue: boolean;
  /** Memories each core module defines, and the version's memory limit in bytes (all memories together). */
  memories: { perModule: Record<string, number>; limitBytes: number };
}

/** What one call may reach (deny by default; see worker-grants.mjs). */
export interface SandboxGrants {
  env: [string, string][];
  /** wasi:config values. */
  config: [string, string][];
  /** wasi:http hosts (`api.example.com`, `*.example.com`, optionally `:port`). */
  hosts: string[];
  /** Filesystem rules over paths in the workspace (`fs://data/**`). */
  fs: { uri: string; access: ('read' | 'write')[] }[];
  /** The tenant's workspace directory on this node, preopened as the guest's `/` (null: no filesystem). */
  workspace: string | null;
  /** Operator switch for development: lets plugins reach loopback and private addresses. */
  allowPrivate: boolean;
}

/** Serves wasi:keyvalue operations of one call from the tenant's store. */
export type KeyValueHandler = (op: string, args: unknown[]) => Promise<unknown>;

export interface CallOutput {
  stdout: string;
  stderr: string;
  /** Output past the per-call cap was dropped. */
  truncated: boolean;
}

export type InvokeOutcome = (
  | { ok: true; value: unknown }
  | { ok: false; kind: 'component-error'; payload: unknown; message: string }
  | { ok: false; kind: 'timeout' | 'trap' | 'exit' | 'instantiate' | 'error'; message: string }
) & { output?: CallOutput };

interface WorkerReply {
  ok: boolean;
  value?: unknown;
  kind?: string;
  message?: string;
  payload?: unknown;
  output?: CallOutput;
  missing?: boolean;
}

/** What a call with no grants may reach: nothing. */
const NO_GRANTS: SandboxGrants = { env: [], config: [], hosts: [], fs: [], workspace: null, allowPrivate: false };
const grantsKeyOf = (g: SandboxGrants) => createHash('sha256').update(JSON.stringify(g)).digest('base64url');
const NO_GRANTS_KEY = grantsKeyOf(NO_GRANTS);

const Wasm = (globalThis as unknown as { WebAssembly: { Module: new (b: Uint8Array) => unknown } }).WebAssembly;

/**
 * How many sandbox threads a node runs and how its tool lanes hand them out: one lane slot per thread, and no tenant
 * may hold them all, so a tenant stuck in slow or runaway calls always leaves a thread for the others. Two threads more
 * than cores: a thread spends most of a small call waiting for its next message, so a tenant alone keeps several calls
 * in flight (the next is ready as one finishes) and the node's main thread is not left idle, without ever taking the
 * last thread. Six at least: on a small VM each call waits for two wake-ups of a parked thread (the sandbox thread's,
 * then the main thread's for the reply), 50-100 µs each, so a tenant alone with three calls in flight was held to
 * three per round trip with the main thread half idle: 21,389-26,051 calls/s on 2 cores, 29,247-33,618 with five in
 * flight (six threads; docs/architecture.md, "The sandbox threads"). The node (compose.ts) and the sandbox-call bench
 * both size from here, so the bench measures what runs.
 */
export function sandboxSizing(cores = availableParallelism()) {
  const threads = Math.max(6, cores + 2);
  return { threads, slots: threads, perTenantInFlight: threads - 1 };
}

/**
 * Worker threads that run plugin calls (threads.ts). A call past its timeout is stopped by terminating its thread (the
 * only way to stop a wasm loop; one watchdog timer fires the overdue calls' signals, watchdog.ts); the thread is
 * replaced and other calls go on. Wasm linear memory is capped in the modules themselves (see memory-cap.ts); the JS
 * heap of each thread is capped here.
 *
 * The set has a fixed size: the lanes hand out one slot per thread, so every slot must have a live thread behind it.
 * A call that cost its thread (a timeout, a thread out of memory) returns only once the replacement is ready, so the
 * tenant at fault holds its lane slot through the respawn and its neighbours never wait for one.
 *
 * `spinPolicy` and `hotLoop`: the node's, so that spinning and polling for replies are weighed against the one loop's
 * load with the rest of the node's polling (threads.ts has its own policy and no polling without them).
 */
export function createSandbox(opts: { threads?: number; maxHeapMb?: number; spinPolicy?: SpinPolicy; hotLoop?: HotLoop } = {}) {
  const threads = opts.threads ?? 2;
  // Threads start on the first call: a node that never runs a plugin spends nothing on them.
  let pool: SandboxThreads | null = null;
  const watchdog = createWatchdog();
  const started = () =>
    (pool ??= createSandboxThreads({
      threads,
      maxHeapMb: opts.maxHeapMb ?? 128,
      ...(opts.spinPolicy ? { spinPolicy: opts.spinPolicy } : {}),
      ...(opts.hotLoop ? { hotLoop: opts.hotLoop } : {}),
    }));
  const compiled = new Map<string, LoadedArtifacts>();

  return {
    loaded: (key: string) => compiled.get(key),
    /** Compiles the artifacts once per process (a compiled module is shared with workers without recompiling). */
    load(key: string, files: Record<string, Uint8Array>): LoadedArtifacts {
      let a = compiled.get(key);
      if (!a) {
        const modules: Record<string, unknown> = {};
        const perModule: Record<string, number> = {};
        let maxPages = 0;
        for (const [name, bytes] of Object.entries(files)) {
          if (!name.endsWith('.wasm')) continue;
          modules[name] = new Wasm.Module(bytes);
          const m = definedMemories(bytes);
          perModule[name] = m.count;
          maxPages = Math.max(maxPages, m.maxPages ?? 0);
        }
        const glue = files['plugin.js'];
        if (!glue) throw new Error(`artifacts ${key} have no plugin.js`);
        const usesKeyValue = Buffer.from(glue).includes('wasi:keyvalue/store');
        // Every memory was capped at the version's limit when the version was activated (memory-cap.ts).
        compiled.set(key, (a = { key, glue, modules, usesKeyValue, memories: { perModule, limitBytes: maxPages * 65536 } }));
      }
      return a;
    },
    async invoke(
      a: LoadedArtifacts,
      call: {
        tenant: string;
        export: string;
        signature: FuncType;
        args: Record<string, unknown>;
        grants?: Partial<SandboxGrants>;
        /** A stable key of `grants` (instances are cached per grants), when the caller has one at hand. */
        grantsKey?: string;
        timeoutMs: number;
        keyValue?: KeyValueHandler;
      },
    ): Promise<InvokeOutcome> {
      const [iface, func] = call.export.includes('#') ? (call.export.split('#') as [string, string]) : [null, call.export];
      const args = call.signature.params.map(([name, t]) => toGuest(call.args[name] ?? null, t));
      // The grants travel only to a worker that has not seen their key (below); most calls name the key.
      const grantsOf = (): SandboxGrants => ({ ...NO_GRANTS, ...call.grants });
      const bridge = a.usesKeyValue && call.keyValue ? openBridge(call.keyValue) : null;
      // Calls carry only the keys of the code and the grants; a worker that lacks either asks for them once.
      const task = {
        key: a.key,
        iface,
        func: camel(func),
        args,
        tenant: call.tenant,
        grantsKey: call.grantsKey ?? (call.grants ? grantsKeyOf(grantsOf()) : NO_GRANTS_KEY),
        ...(bridge ? { bridge: { port: bridge.remote, flag: bridge.flag } } : {}),
      };
      const p = started();
      // Calls are timed from when the threads have loaded: the first calls after a start never pay for that.
      if (!p.isWarm()) await p.warm;
      // Timed from here: the watchdog fires the call's signal at its deadline, and the threads stop it.
      const signal = watchdog.begin(call.timeoutMs);
      const run = (t: object, transferList?: MessagePort[]) => p.run(t, signal, transferList) as Promise<WorkerReply>;
      let reply: WorkerReply;
      try {
        const withCode = () => ({ ...task, glue: a.glue, modules: a.modules, memories: a.memories, grants: grantsOf() });
        if (bridge) {
          // The bridge's port moves with the task, so this call cannot be retried: send the code along.
          reply = await run(withCode(), [bridge.remote]);
        } else {
          reply = await run(task);
          // A worker that has not seen this version yet asks for its compiled code, once.
          if (reply.missing) reply = await run(withCode());
        }
      } catch (err) {
        // Stopped by the watchdog only if the call was still queued or running when it fired (not one that answered).
        if (signal.stopped) return { ok: false, kind: 'timeout', message: `the call ran past its ${call.timeoutMs} ms limit and was stopped` };
        return { ok: false, kind: 'trap', message: workerFailure(err as Error) };
      } finally {
        watchdog.end(signal);
        bridge?.close();
      }
      const output = reply.output ? { output: reply.output } : {};
      const result = call.signature.result;
      if (reply.ok) {
        if (result !== null && typeof result === 'object' && 'result' in result) {
          return { ok: true, value: result.result.ok === null ? null : fromGuest(reply.value, result.result.ok), ...output };
        }
        return { ok: true, value: result === null ? null : fromGuest(reply.value, result), ...output };
      }
      if (reply.kind === 'component-error') {
        const errType = result !== null && typeof result === 'object' && 'result' in result ? result.result.err : null;
        const payload = errType === null ? null : fromGuest(reply.payload, errType);
        return { ok: false, kind: 'component-error', payload, message: typeof payload === 'string' ? payload : JSON.stringify(payload), ...output };
      }
      return { ok: false, kind: (reply.kind ?? 'error') as 'trap', message: reply.message ?? 'the call failed', ...output };
    },
    stats: () => pool?.stats() ?? { threads: 0, queued: 0, completed: 0, takenAwake: 0, spins: 0, wakeups: 0 },
    close: async () => {
      watchdog.stop();
      const p = pool;
      pool = null;
      await p?.close();
    },
  };
}

export type Sandbox = ReturnType<typeof createSandbox>;

function workerFailure(err: Error & { code?: string }): string {
  if (err.code === 'ERR_WORKER_OUT_OF_MEMORY') return 'the call ran out of memory (the sandbox heap limit) and was stopped';
  return err.message;
}

/**
 * The main-thread end of a call's wasi:keyvalue bridge: the worker posts a request and blocks on `flag`; the reply
 * is posted before the flag is raised, so the worker reads it synchronously off its port.
 */
function openBridge(handler: KeyValueHandler) {
  const { port1, port2 } = new MessageChannel();
  const flag = new SharedArrayBuffer(4);
  const cell = new Int32Array(flag);
  port1.on('message', (req: { op: string; args: unknown[] }) => {
    handler(req.op, req.args).then(
      (value) => port1.postMessage({ value }),
      (err: unknown) => port1.postMessage({ error: err instanceof Error ? err.message : String(err) }),
    ).finally(() => {
      Atomics.store(cell, 0, 1);
      Atomics.notify(cell, 0);
    });
  });
  return {
    remote: port2,
    flag,
    close: () => port1.close(),
  };
}
