// Runs in a worker of the node's task pool (runtime/core/workers): one JavaScript evaluation in a fresh QuickJS
// runtime (quickjs-ng compiled to WebAssembly). The guest has no process, require, fetch or timers: only the
// language, `console` and, for the Sandbox, `fs` over the caller's workspace (sandbox-fs.ts). Its memory is capped by QuickJS, its time by an interrupt at the deadline, and the task
// pool terminates the worker should native code (a huge Array.fill) outrun both.
import variant from '@jitl/quickjs-ng-wasmfile-release-sync';
import { newQuickJSWASMModuleFromVariant, shouldInterruptAfterDeadline, type QuickJSContext, type QuickJSSyncVariant, type QuickJSWASMModule } from 'quickjs-emscripten-core';
import { sandboxFs, type SandboxFsState } from './sandbox-fs.ts';

export interface JsRunLimits {
  timeoutMs: number;
  memoryBytes: number;
  outputChars: number;
}

export interface JsRunResult {
  ok: boolean;
  /** The completion value as JSON text (undefined when it has none), or the thrown error's text. */
  result: string | null;
  console: string;
  truncated: boolean;
  timedOut: boolean;
}

let module: Promise<QuickJSWASMModule> | null = null;

/** A Sandbox run: `workspace` gives the guest `fs`; the workspace's usage after the run comes back with the result. */
export async function runInSandbox(code: string, limits: JsRunLimits, workspace: SandboxFsState): Promise<JsRunResult & { usage: SandboxFsState['usage'] }> {
  const r = await runJavascript(code, limits, workspace);
  return { ...r, usage: workspace.usage };
}

/**
 * The guest's `fs`: each function hands its arguments to the host as JSON text and gets its answer (or its refusal)
 * back the same way. Strings cross the boundary as C strings, which would end at a NUL; in JSON a NUL is an escape.
 */
const FS_PRELUDE = `(() => {
  const call = globalThis.__fs;
  delete globalThis.__fs;
  const op = (name) => (...args) => {
    const r = JSON.parse(call(name, JSON.stringify(args)));
    if ('error' in r) throw new Error(r.error);
    return r.value;
  };
  globalThis.fs = Object.freeze({ read: op('read'), write: op('write'), append: op('append'), exists: op('exists'), list: op('list'), remove: op('remove') });
})();`;

function installFs(vm: QuickJSContext, workspace: SandboxFsState) {
  const fs = sandboxFs(workspace) as Record<string, (...a: unknown[]) => unknown>;
  const host = vm.newFunction('__fs', (name, args) => {
    const op = fs[vm.getString(name)];
    try {
      if (!op) throw new Error('no such fs operation');
      const value = op(...(JSON.parse(vm.getString(args)) as unknown[]));
      return vm.newString(JSON.stringify({ value: value ?? null }));
    } catch (err) {
      // A refusal (a path out of the workspace, the quota) becomes an Error the guest may catch.
      return vm.newString(JSON.stringify({ error: (err as Error).message }));
    }
  });
  vm.setProp(vm.global, '__fs', host);
  host.dispose();
  vm.unwrapResult(vm.evalCode(FS_PRELUDE, 'fs.js')).dispose();
}

export async function runJavascript(code: string, limits: JsRunLimits, workspace?: SandboxFsState): Promise<JsRunResult> {
  const qjs = await (module ??= newQuickJSWASMModuleFromVariant(variant as unknown as QuickJSSyncVariant));
  const rt = qjs.newRuntime();
  rt.setMemoryLimit(limits.memoryBytes);
  rt.setMaxStackSize(1024 * 1024);
  const deadline = Date.now() + limits.timeoutMs;
  rt.setInterruptHandler(shouldInterruptAfterDeadline(deadline));
  const vm = rt.newContext();
  let out = '';
  let truncated = false;
  const emit = (line: string) => {
    if (truncated) return;
    if (out.length + line.length + 1 > limits.outputChars) {
      out += line.slice(0, Math.max(0, limits.outputChars - out.length));
      truncated = true;
    } else out += `${line}\n`;
  };
  try {
    const con = vm.newObject();
    for (const level of ['log', 'info', 'warn', 'error', 'debug']) {
      const fn = vm.newFunction(level, (...args) => {
        emit(args.map((h) => {
          const v = vm.dump(h);
          return typeof v === 'string' ? v : JSON.stringify(v) ?? String(v);
        }).join(' '));
      });
      vm.setProp(con, level, fn);
      fn.dispose();
    }
    vm.setProp(vm.global, 'console', con);
    con.dispose();
    if (workspace) installFs(vm, workspace);
    const r = vm.evalCode(code, 'main.js');
    const timedOut = Date.now() >= deadline;
    if (r.error) {
      const e = vm.dump(r.error) as { name?: string; message?: string } | string;
      r.error.dispose();
      const text = typeof e === 'object' && e !== null ? `${e.name ?? 'Error'}: ${e.message ?? ''}` : String(e);
      return { ok: false, result: text.slice(0, limits.outputChars), console: out, truncated, timedOut: timedOut && /interrupted/.test(text) };
    }
    const value = vm.dump(r.value);
    r.value.dispose();
    let json = value === undefined ? null : (JSON.stringify(value) ?? null);
    if (json !== null && json.length > limits.outputChars) {
      json = json.slice(0, limits.outputChars);
      truncated = true;
    }
    return { ok: true, result: json, console: out, truncated, timedOut: false };
  } finally {
    vm.dispose();
    rt.dispose();
  }
}
