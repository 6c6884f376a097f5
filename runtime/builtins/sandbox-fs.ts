// Runs in a worker of the node's task pool, inside one Sandbox run: the guest's `fs`, synchronous (QuickJS calls
// into it between bytecodes), over the caller's workspace directory only. Paths are checked as the Files tools check
// them (relative, no `..` out, no symbolic link on the way); writes are held to the workspace's quota, counted from
// the usage measured before the run.
import { appendFileSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { BuiltinToolError } from './tool-error.ts';
import { relativeParts, throughLink, WORKSPACE_LIMITS } from './workspace-paths.ts';

export interface SandboxFsState {
  root: string;
  /** The workspace's bytes and entries before the run; kept current as the run writes and removes. */
  usage: { bytes: number; entries: number };
}

const LIST_MAX = 1000;

function statOrNull(p: string) {
  try {
    return lstatSync(p);
  } catch {
    return null;
  }
}

/** The guest's filesystem: each function takes and returns plain values, and throws BuiltinToolError with a reason. */
export function sandboxFs(state: SandboxFsState) {
  const resolve = (given: unknown) => {
    const { rel, parts } = relativeParts(given);
    let at = state.root;
    for (const part of parts) {
      at = path.join(at, part);
      const st = statOrNull(at);
      if (!st) break;
      if (st.isSymbolicLink()) throw throughLink('path', given as string);
    }
    return { abs: path.join(state.root, ...parts), rel };
  };
  const file = (given: unknown) => {
    const r = resolve(given);
    if (r.rel === '.') throw new BuiltinToolError('the workspace itself is a directory, not a file');
    return { ...r, st: statOrNull(r.abs) };
  };

  /** Makes the directories above a file, counting each new one as an entry. */
  function parentsOf(abs: string) {
    const missing: string[] = [];
    for (let d = path.dirname(abs); d !== state.root && !statOrNull(d); d = path.dirname(d)) missing.push(d);
    if (state.usage.entries + missing.length + 1 > WORKSPACE_LIMITS.entries) throw new BuiltinToolError(`the workspace would hold more than ${WORKSPACE_LIMITS.entries} entries`);
    mkdirSync(path.dirname(abs), { recursive: true, mode: 0o700 });
    state.usage.entries += missing.length;
  }

  function put(given: unknown, text: unknown, append: boolean) {
    if (typeof text !== 'string') throw new BuiltinToolError('the content to write must be a string');
    const { abs, rel, st } = file(given);
    if (st && !st.isFile()) throw new BuiltinToolError(`${JSON.stringify(rel)} is not a file`);
    const old = st?.size ?? 0;
    const added = Buffer.byteLength(text);
    const size = append ? old + added : added;
    if (size > WORKSPACE_LIMITS.fileBytes) throw new BuiltinToolError(`${JSON.stringify(rel)} would hold ${size} bytes: a file holds at most ${WORKSPACE_LIMITS.fileBytes}`);
    const total = state.usage.bytes - old + size;
    if (total > WORKSPACE_LIMITS.bytes) throw new BuiltinToolError(`the workspace would hold ${total} bytes: its quota is ${WORKSPACE_LIMITS.bytes}`);
    if (!st) parentsOf(abs);
    (append ? appendFileSync : writeFileSync)(abs, text, { mode: 0o600 });
    state.usage.bytes = total;
    if (!st) state.usage.entries++;
    return size;
  }

  return {
    read(given: unknown): string {
      const { rel, abs, st } = file(given);
      if (!st) throw new BuiltinToolError(`no file ${JSON.stringify(rel)} in the workspace`);
      if (!st.isFile()) throw new BuiltinToolError(`${JSON.stringify(rel)} is not a file`);
      if (st.size > WORKSPACE_LIMITS.readBytes) throw new BuiltinToolError(`${JSON.stringify(rel)} holds ${st.size} bytes: a run reads at most ${WORKSPACE_LIMITS.readBytes} per file`);
      return readFileSync(abs, 'utf8');
    },
    write: (given: unknown, text: unknown) => put(given, text, false),
    append: (given: unknown, text: unknown) => put(given, text, true),
    exists: (given: unknown) => statOrNull(resolve(given).abs) !== null,
    list(given: unknown = '.'): { name: string; type: string; size: number }[] {
      const { abs, rel } = resolve(given);
      const st = statOrNull(abs);
      if (!st?.isDirectory()) throw new BuiltinToolError(`no directory ${JSON.stringify(rel)} in the workspace`);
      return readdirSync(abs, { withFileTypes: true })
        .slice(0, LIST_MAX)
        .map((e) => ({ name: e.name, type: e.isDirectory() ? 'directory' : e.isFile() ? 'file' : 'other', size: e.isFile() ? (statOrNull(path.join(abs, e.name))?.size ?? 0) : 0 }));
    },
    remove(given: unknown): boolean {
      const { abs, rel, st } = file(given);
      if (!st) return false;
      if (st.isDirectory() && readdirSync(abs).length > 0) throw new BuiltinToolError(`the directory ${JSON.stringify(rel)} is not empty: remove its files first`);
      rmSync(abs, { recursive: false, force: false, ...(st.isDirectory() ? { recursive: true } : {}) });
      if (st.isFile()) state.usage.bytes -= st.size;
      state.usage.entries -= 1;
      return true;
    },
  };
}

export type SandboxFs = ReturnType<typeof sandboxFs>;
