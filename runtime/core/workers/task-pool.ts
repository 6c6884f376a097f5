import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { fromWire, PlatformError, type ErrorCode } from '../errors/index.ts';
import { createLaneScheduler, type LaneLoad } from '../lanes/index.ts';

const WORKER_FILE = fileURLToPath(new URL('./task-worker.mjs', import.meta.url));

/** How a pool treats one kind of task: its deadline and the code a task past it fails with. */
export interface TaskLimits {
  timeoutMs: number;
  /** The error of a task that ran out of time or heap (its worker is terminated and replaced). */
  onLimit: ErrorCode;
}

export interface TaskOptions {
  /** Whose lane the task waits in. */
  tenant: string;
  signal?: AbortSignal;
  transfer?: ArrayBuffer[];
}

export interface TaskPool {
  /**
   * Runs `fn` of the module at `module` (a file URL of a .ts or .mjs module) with structured-cloneable `args` in a
   * worker thread. A PlatformError thrown there is thrown here with its code; a task past its deadline or heap
   * terminates its worker and fails with `limits.onLimit`. Tasks queue in their tenant's lane: a tenant whose lane
   * is full gets PLT_LANE_OVERLOADED, and one tenant's tasks never take every thread while another's wait.
   * Byte arrays of the result that own their buffer arrive moved, not copied; `transfer` moves buffers of the
   * arguments the same way (the caller must not use them afterwards).
   */
  run<T>(module: URL, fn: string, args: unknown[], limits: TaskLimits, opts: TaskOptions): Promise<T>;
  /** Its lanes as a whole (the node's metrics). */
  load(): LaneLoad;
  close(): Promise<void>;
}

/**
 * Worker threads for the work a tenant's input can make long — reading archives, reflecting components, building
 * schemas, parsing YAML — so that nothing a tenant sends holds the node's event loop (DESIGN §5). Each worker's heap
 * is capped; a task that outruns its deadline is stopped by terminating its worker (the only way to stop a busy
 * loop or a runaway parser), and Piscina replaces it. Threads start on first use and leave when idle.
 */
export function createTaskPool(opts: { threads?: number; heapMb?: number; queuePerTenant?: number } = {}): TaskPool {
  const threads = opts.threads ?? 2;
  const lanes = createLaneScheduler({ slots: threads, perTenantInFlight: Math.max(1, threads - 1), queueCap: opts.queuePerTenant ?? 8 });
  let piscina: Piscina | null = null;
  const pool = () =>
    (piscina ??= new Piscina({
      filename: WORKER_FILE,
      minThreads: 0,
      maxThreads: threads,
      idleTimeout: 60_000,
      recordTiming: false,
      resourceLimits: { maxOldGenerationSizeMb: opts.heapMb ?? 512 },
    }));
  return {
    run<T>(module: URL, fn: string, args: unknown[], limits: TaskLimits, o: TaskOptions): Promise<T> {
      return lanes.run(o.tenant, () => runNow<T>(module, fn, args, limits, o));
    },
    load: () => lanes.load(),
    async close() {
      await piscina?.destroy();
      piscina = null;
    },
  };

  async function runNow<T>(module: URL, fn: string, args: unknown[], limits: TaskLimits, { signal, transfer }: TaskOptions): Promise<T> {
    signal?.throwIfAborted();
    const deadline = AbortSignal.timeout(limits.timeoutMs);
    const stop = signal ? AbortSignal.any([signal, deadline]) : deadline;
    let reply: { ok: boolean; value?: T; error?: { code?: string; message: string; data?: unknown } };
    try {
      reply = await pool().run({ module: module.href, fn, args }, { signal: stop, ...(transfer?.length ? { transferList: transfer } : {}) });
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      if (deadline.aborted) throw new PlatformError(limits.onLimit, `stopped after ${limits.timeoutMs / 1000} s`);
      const e = err as Error & { code?: string };
      if (e.code === 'ERR_WORKER_OUT_OF_MEMORY') throw new PlatformError(limits.onLimit, `stopped: it needed more than ${opts.heapMb ?? 512} MB of memory`);
      throw err;
    }
    if (reply.ok) return reply.value as T;
    if (reply.error?.code) throw fromWire(reply.error);
    throw new Error(reply.error?.message ?? 'the worker task failed');
  }
}
