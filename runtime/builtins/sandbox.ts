import { BuiltinToolError, type Builtin, type BuiltinOperation } from './builtin.ts';
import { CODE_LIMITS, JS_ARGUMENTS, runGuest } from './code-runner.ts';
import type { JsRunResult } from './quickjs-task.ts';
import { workspaceRoot, workspaceUsage, WORKSPACE_LIMITS } from './workspace-paths.ts';

const exec: BuiltinOperation = {
  name: 'sandbox_exec',
  operation: 'exec',
  description:
    'Run JavaScript (ES2023, QuickJS) with your workspace\'s files: `fs.read(path)`, `fs.write(path, text)`, `fs.append(path, text)`, ' +
    '`fs.list(dir)`, `fs.exists(path)`, `fs.remove(path)`, paths relative to the workspace. What it writes stays for the next call and for the Files tools. ' +
    `No network, process or timers. Memory ${CODE_LIMITS.memoryBytes / 1024 / 1024} MiB, output ${CODE_LIMITS.outputChars / 1024} KiB, time ${CODE_LIMITS.defaultTimeoutMs / 1000} s unless timeout_ms says (at most ${CODE_LIMITS.maxTimeoutMs / 1000} s); ` +
    `the workspace's quota (${WORKSPACE_LIMITS.bytes / 1024 / 1024} MiB in ${WORKSPACE_LIMITS.entries} entries, ${WORKSPACE_LIMITS.fileBytes / 1024 / 1024} MiB a file) holds.`,
  readOnly: false,
  inputSchema: { type: 'object', properties: JS_ARGUMENTS, required: ['code'], additionalProperties: false },
  async run(deps, ctx, a) {
    const root = await workspaceRoot(deps, ctx);
    const usage = await workspaceUsage(root);
    if (usage.entries > WORKSPACE_LIMITS.entries) throw new BuiltinToolError(`the workspace holds more than ${WORKSPACE_LIMITS.entries} entries: delete some first`);
    const { result, console, truncated, reply } = await runGuest<JsRunResult & { usage: { bytes: number; entries: number } }>(deps, ctx, 'runInSandbox', String(a.code), Number(a.timeout_ms ?? CODE_LIMITS.defaultTimeoutMs), { root, usage });
    return { result, console, truncated, workspace: reply.usage };
  },
};

/**
 * Sandbox: code execution that keeps the workspace's files between calls. The same QuickJS runtime as the Code
 * Runner, in the caller's lane, with `fs` over the caller's workspace (the Files tools' directory and rules).
 */
export const SANDBOX: Builtin = {
  id: 'builtin-sandbox',
  kind: 'Sandbox',
  family: 'sandbox',
  name: 'Sandbox',
  namespace: 'sandbox',
  description: 'Runs JavaScript that reads and writes your workspace\'s files, which stay between calls: memory, time, output and quota limits.',
  sortOrder: 35,
  config: null,
  operations: [exec],
};
