import { isPlatformError } from '../core/errors/index.ts';
import { BuiltinToolError, type Builtin, type BuiltinContext, type BuiltinDeps, type BuiltinOperation } from './builtin.ts';
import type { JsRunResult } from './quickjs-task.ts';

const TASK = new URL('./quickjs-task.ts', import.meta.url);

/** Limits of one run: the time a caller may ask for (default, most), the guest's memory, the output returned. */
export const CODE_LIMITS = { defaultTimeoutMs: 5_000, maxTimeoutMs: 30_000, memoryBytes: 64 * 1024 * 1024, outputChars: 64 * 1024, codeChars: 256 * 1024 } as const;
/** How long past the guest's own deadline the worker is given before it is terminated (native code ignores interrupts). */
const GRACE_MS = 2_000;

/** A completion value cut at the output cap is no JSON any more: it is returned as the text it was. */
function parsedOrText(json: string): unknown {
  try {
    return JSON.parse(json);
  } catch {
    return json;
  }
}

const runJs: BuiltinOperation = {
  name: 'run_javascript',
  operation: 'run_javascript',
  description:
    `Run JavaScript (ES2023, QuickJS) in a sandbox without network, filesystem or timers; console output and the value of the last expression are returned. ` +
    `Memory ${CODE_LIMITS.memoryBytes / 1024 / 1024} MiB, output ${CODE_LIMITS.outputChars / 1024} KiB, time ${CODE_LIMITS.defaultTimeoutMs / 1000} s unless timeout_ms says (at most ${CODE_LIMITS.maxTimeoutMs / 1000} s).`,
  readOnly: true,
  inputSchema: {
    type: 'object',
    properties: {
      code: { type: 'string', minLength: 1, maxLength: CODE_LIMITS.codeChars },
      timeout_ms: { type: 'integer', minimum: 100, maximum: CODE_LIMITS.maxTimeoutMs, default: CODE_LIMITS.defaultTimeoutMs },
    },
    required: ['code'],
    additionalProperties: false,
  },
  async run(deps, ctx, a) {
    const { result, console, truncated } = await runGuest(deps, ctx, 'runJavascript', String(a.code), Number(a.timeout_ms ?? CODE_LIMITS.defaultTimeoutMs));
    return { result, console, truncated };
  },
};

/** The code and timeout_ms arguments of a JavaScript run (Code Runner, Sandbox). */
export const JS_ARGUMENTS = runJs.inputSchema.properties as Record<string, unknown>;

/**
 * One QuickJS run in the task pool, in the caller's lane (`runJavascript`, or `runInSandbox` with the workspace as
 * `extra`): what it printed and the value of its last expression, or a tool error that says how it ended.
 */
export async function runGuest<R extends JsRunResult>(deps: BuiltinDeps, ctx: BuiltinContext, fn: string, code: string, timeoutMs: number, ...extra: unknown[]) {
  return runIn<R>(deps, ctx, { module: TASK, fn, memoryBytes: CODE_LIMITS.memoryBytes, graceMs: GRACE_MS }, code, timeoutMs, ...extra);
}

async function runIn<R extends JsRunResult>(deps: BuiltinDeps, ctx: BuiltinContext, task: { module: URL; fn: string; memoryBytes: number; graceMs: number }, code: string, timeoutMs: number, ...extra: unknown[]) {
  let r: R;
  try {
    r = await deps.tasks.run<R>(task.module, task.fn, [code, { timeoutMs, memoryBytes: task.memoryBytes, outputChars: CODE_LIMITS.outputChars }, ...extra], { timeoutMs: timeoutMs + task.graceMs, onLimit: 'TOOL_CODE_LIMIT' }, {
      tenant: ctx.caller.accountId,
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    });
  } catch (err) {
    if (isPlatformError(err) && err.code === 'TOOL_CODE_LIMIT') throw new BuiltinToolError(`the code was stopped: ${err.message}`, 'timeout');
    throw err;
  }
  if ((r as { memoryExceeded?: boolean }).memoryExceeded) throw new BuiltinToolError(`the code used more than ${task.memoryBytes / 1024 / 1024} MiB of memory and was stopped`);
  if (r.timedOut) throw new BuiltinToolError(`the code ran past its ${timeoutMs} ms limit and was stopped${r.console ? `; its output so far:\n${r.console}` : ''}`, 'timeout');
  if (!r.ok) throw new BuiltinToolError(`the code threw ${r.result}${r.console ? `\nconsole:\n${r.console}` : ''}`);
  return { result: r.result === null ? null : parsedOrText(r.result), console: r.console, truncated: r.truncated, reply: r };
}

const PYTHON_TASK = new URL('./python-task.ts', import.meta.url);
/** The Python runner's memory (its resident set, the interpreter's own ~100 MiB included) and its extra start time. */
const PYTHON = { memoryBytes: 512 * 1024 * 1024, graceMs: 45_000 } as const;

const runPy: BuiltinOperation = {
  name: 'run_python',
  operation: 'run_python',
  description:
    `Run Python 3 (Pyodide: CPython compiled to WebAssembly, the standard library only) in a process of its own without network or files; what it prints and the value of the last expression are returned. ` +
    `Memory ${PYTHON.memoryBytes / 1024 / 1024} MiB, output ${CODE_LIMITS.outputChars / 1024} KiB, time ${CODE_LIMITS.defaultTimeoutMs / 1000} s unless timeout_ms says (at most ${CODE_LIMITS.maxTimeoutMs / 1000} s).`,
  readOnly: true,
  inputSchema: runJs.inputSchema,
  async run(deps, ctx, a) {
    try {
      const { result, console, truncated } = await runIn(deps, ctx, { module: PYTHON_TASK, fn: 'runPython', ...PYTHON }, String(a.code), Number(a.timeout_ms ?? CODE_LIMITS.defaultTimeoutMs));
      return { result, stdout: console, truncated };
    } catch (err) {
      // A node that cannot make the sandbox (no network namespaces for its user) runs no Python, and says so.
      if (err instanceof Error && !(err instanceof BuiltinToolError) && err.message.startsWith('the Python sandbox')) throw new BuiltinToolError(`Python is not available on this node: ${err.message}`);
      throw err;
    }
  },
};

export const CODE_RUNNER: Builtin = {
  id: 'builtin-code-runner',
  kind: 'Code Runner',
  family: 'code_runner',
  name: 'Code Runner',
  namespace: 'run',
  description: 'Runs code in a sandbox with memory, time and output limits: JavaScript on QuickJS and Python on Pyodide, both compiled to WebAssembly.',
  sortOrder: 30,
  config: null,
  operations: [runJs, runPy],
};
