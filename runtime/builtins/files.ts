import { mkdir, open, readdir, rename, rm, stat, writeFile, appendFile, lstat } from 'node:fs/promises';
import path from 'node:path';
import { BuiltinToolError, type Builtin, type BuiltinContext, type BuiltinDeps, type BuiltinOperation } from './builtin.ts';
import { resolveInside, WORKSPACE_LIMITS, workspaceRoot, workspaceUsage } from './workspace-paths.ts';

const pathArg = { type: 'string', description: 'A path relative to the workspace root, with / between names', maxLength: WORKSPACE_LIMITS.pathChars };
const encoding = { type: 'string', enum: ['utf8', 'base64'], default: 'utf8', description: 'utf8 for text, base64 for bytes' };
const LS_MAX = 1000;

const kindOf = (st: { isDirectory(): boolean; isFile(): boolean }) => (st.isDirectory() ? 'directory' : st.isFile() ? 'file' : 'other');
const missing = (rel: string) => new BuiltinToolError(`no file or directory ${JSON.stringify(rel)} in the workspace`);

async function statOf(abs: string, rel: string) {
  const st = await lstat(abs).catch(() => null);
  if (!st) throw missing(rel);
  return st;
}

const read: BuiltinOperation = {
  name: 'file_read',
  operation: 'read',
  description: `Read a file of your workspace (at most ${WORKSPACE_LIMITS.readBytes} bytes per call: use offset and length for more).`,
  readOnly: true,
  inputSchema: {
    type: 'object',
    properties: { path: pathArg, encoding, offset: { type: 'integer', minimum: 0, default: 0 }, length: { type: 'integer', minimum: 1, maximum: WORKSPACE_LIMITS.readBytes } },
    required: ['path'],
    additionalProperties: false,
  },
  async run(deps, ctx, a) {
    const { abs, rel } = await resolveInside(await workspaceRoot(deps, ctx), a.path);
    const st = await statOf(abs, rel);
    if (!st.isFile()) throw new BuiltinToolError(`${JSON.stringify(rel)} is a ${kindOf(st)}, not a file`);
    const offset = Number(a.offset ?? 0);
    const length = Math.min(Number(a.length ?? WORKSPACE_LIMITS.readBytes), Math.max(0, st.size - offset));
    const fh = await open(abs, 'r');
    try {
      const buf = Buffer.alloc(length);
      const { bytesRead } = await fh.read(buf, 0, length, offset);
      const bytes = buf.subarray(0, bytesRead);
      return { path: rel, size: st.size, offset, content: a.encoding === 'base64' ? bytes.toString('base64') : bytes.toString('utf8'), truncated: offset + bytesRead < st.size };
    } finally {
      await fh.close();
    }
  },
};

const write: BuiltinOperation = {
  name: 'file_write',
  operation: 'write',
  description: `Write (or append to) a file of your workspace, creating its directories. A file holds at most ${WORKSPACE_LIMITS.fileBytes} bytes; a workspace ${WORKSPACE_LIMITS.bytes} bytes in ${WORKSPACE_LIMITS.entries} entries.`,
  readOnly: false,
  inputSchema: {
    type: 'object',
    properties: { path: pathArg, content: { type: 'string' }, encoding, append: { type: 'boolean', default: false } },
    required: ['path', 'content'],
    additionalProperties: false,
  },
  async run(deps, ctx, a) {
    return writeInWorkspace(deps, ctx, a.path, Buffer.from(String(a.content), a.encoding === 'base64' ? 'base64' : 'utf8'), a.append === true);
  },
};

/** Writes (or appends) bytes to a file of the caller's workspace, held to the file size and the workspace quota. */
export async function writeInWorkspace(deps: BuiltinDeps, ctx: BuiltinContext, given: unknown, bytes: Buffer, append = false): Promise<{ path: string; size: number }> {
  const root = await workspaceRoot(deps, ctx);
  const { abs, rel } = await resolveInside(root, given);
  if (rel === '.') throw new BuiltinToolError('path names the workspace itself: give a file name');
  const old = await lstat(abs).catch(() => null);
  if (old && !old.isFile()) throw new BuiltinToolError(`${JSON.stringify(rel)} is a ${kindOf(old)}, not a file`);
  const size = (append && old ? old.size : 0) + bytes.length;
  if (size > WORKSPACE_LIMITS.fileBytes) throw new BuiltinToolError(`the file would hold ${size} bytes: a file holds at most ${WORKSPACE_LIMITS.fileBytes}`);
  const usage = await workspaceUsage(root);
  if (!old && usage.entries + 1 > WORKSPACE_LIMITS.entries) throw new BuiltinToolError(`the workspace holds ${WORKSPACE_LIMITS.entries} entries already: delete some first`);
  const total = usage.bytes - (old?.size ?? 0) + size;
  if (total > WORKSPACE_LIMITS.bytes) throw new BuiltinToolError(`the workspace would hold ${total} bytes: its quota is ${WORKSPACE_LIMITS.bytes}; delete files first`);
  await mkdir(path.dirname(abs), { recursive: true, mode: 0o700 });
  await (append ? appendFile(abs, bytes) : writeFile(abs, bytes));
  return { path: rel, size };
}

const ls: BuiltinOperation = {
  name: 'file_ls',
  operation: 'ls',
  description: `List a directory of your workspace (the root when path is omitted; at most ${LS_MAX} entries).`,
  readOnly: true,
  inputSchema: { type: 'object', properties: { path: pathArg, recursive: { type: 'boolean', default: false } }, additionalProperties: false },
  async run(deps, ctx, a) {
    const { abs, rel } = await resolveInside(await workspaceRoot(deps, ctx), a.path ?? '.');
    const st = await statOf(abs, rel);
    if (!st.isDirectory()) throw new BuiltinToolError(`${JSON.stringify(rel)} is a ${kindOf(st)}, not a directory`);
    const entries: { path: string; type: string; size: number }[] = [];
    const dirs = [''];
    while (dirs.length && entries.length < LS_MAX) {
      const sub = dirs.shift()!;
      const found = (await readdir(path.join(abs, sub), { withFileTypes: true })).sort((x, y) => (x.name < y.name ? -1 : 1));
      for (const e of found) {
        if (entries.length >= LS_MAX) break;
        const p = sub ? `${sub}/${e.name}` : e.name;
        const size = e.isFile() ? ((await lstat(path.join(abs, p)).catch(() => null))?.size ?? 0) : 0;
        entries.push({ path: rel === '.' ? p : `${rel}/${p}`, type: kindOf(e), size });
        if (a.recursive && e.isDirectory()) dirs.push(p);
      }
    }
    return { path: rel, entries, truncated: entries.length >= LS_MAX };
  },
};

const del: BuiltinOperation = {
  name: 'file_delete',
  operation: 'delete',
  description: 'Delete a file of your workspace, or a directory (with recursive, and everything in it).',
  readOnly: false,
  inputSchema: { type: 'object', properties: { path: pathArg, recursive: { type: 'boolean', default: false } }, required: ['path'], additionalProperties: false },
  async run(deps, ctx, a) {
    const { abs, rel } = await resolveInside(await workspaceRoot(deps, ctx), a.path);
    if (rel === '.') throw new BuiltinToolError('path names the workspace itself: delete what is in it instead');
    const st = await statOf(abs, rel);
    if (st.isDirectory() && !a.recursive && (await readdir(abs)).length > 0) throw new BuiltinToolError(`${JSON.stringify(rel)} is a directory that is not empty: pass recursive to delete it with its contents`);
    await rm(abs, { recursive: st.isDirectory(), force: false });
    return { path: rel, deleted: true };
  },
};

const move: BuiltinOperation = {
  name: 'file_move',
  operation: 'move',
  description: 'Move or rename a file or directory within your workspace (an existing file at the destination is replaced).',
  readOnly: false,
  inputSchema: { type: 'object', properties: { from: pathArg, to: pathArg }, required: ['from', 'to'], additionalProperties: false },
  async run(deps, ctx, a) {
    const root = await workspaceRoot(deps, ctx);
    const from = await resolveInside(root, a.from, 'from');
    const to = await resolveInside(root, a.to, 'to');
    if (from.rel === '.' || to.rel === '.') throw new BuiltinToolError('from and to must name entries inside the workspace, not the workspace itself');
    await statOf(from.abs, from.rel);
    if (to.rel === from.rel || to.rel.startsWith(`${from.rel}/`)) throw new BuiltinToolError(`cannot move ${JSON.stringify(from.rel)} into itself`);
    const dest = await lstat(to.abs).catch(() => null);
    if (dest?.isDirectory()) throw new BuiltinToolError(`${JSON.stringify(to.rel)} is a directory: give the new path of the entry`);
    await mkdir(path.dirname(to.abs), { recursive: true, mode: 0o700 });
    await rename(from.abs, to.abs);
    return { from: from.rel, to: to.rel };
  },
};

const statOp: BuiltinOperation = {
  name: 'file_stat',
  operation: 'stat',
  description: 'Whether a path of your workspace exists, its type, size and last change.',
  readOnly: true,
  inputSchema: { type: 'object', properties: { path: pathArg }, required: ['path'], additionalProperties: false },
  async run(deps, ctx, a) {
    const root = await workspaceRoot(deps, ctx);
    const { abs, rel } = await resolveInside(root, a.path);
    const st = await stat(abs).catch(() => null);
    if (!st) return { path: rel, exists: false };
    const usage = rel === '.' ? await workspaceUsage(root) : null;
    return {
      path: rel,
      exists: true,
      type: kindOf(st),
      size: st.isFile() ? st.size : 0,
      modified_at: st.mtime.toISOString(),
      ...(usage ? { workspace: { bytes: usage.bytes, entries: usage.entries, quota_bytes: WORKSPACE_LIMITS.bytes, quota_entries: WORKSPACE_LIMITS.entries } } : {}),
    };
  },
};

export const FILES: Builtin = {
  id: 'builtin-files',
  kind: 'Files',
  family: 'files',
  name: 'Files',
  namespace: 'file',
  description: "The caller's own workspace of files on this gateway or agent: read, write, list, delete, move, stat.",
  sortOrder: 10,
  config: null,
  operations: [read, write, ls, del, move, statOp],
};
