import { lstat, mkdir, readdir, realpath } from 'node:fs/promises';
import path from 'node:path';
import { BuiltinToolError, type BuiltinContext, type BuiltinDeps } from './builtin.ts';

/** Limits of one workspace (a caller on one gateway or agent). */
export const WORKSPACE_LIMITS = { bytes: 64 * 1024 * 1024, entries: 10_000, fileBytes: 10 * 1024 * 1024, readBytes: 1024 * 1024, pathChars: 1024, depth: 32 } as const;

/** The caller's workspace directory, created on first use; anonymous callers have none (the surface withholds these tools). */
export async function workspaceRoot(deps: BuiltinDeps, ctx: BuiltinContext): Promise<string> {
  if (ctx.anchor === null) throw new BuiltinToolError('this tool works in a workspace, and the caller has none (anonymous callers have no workspace)');
  const dir = path.join(deps.workspacesDir, ctx.caller.accountId, ...ctx.anchor.split('/'));
  await mkdir(dir, { recursive: true, mode: 0o700 });
  return dir;
}

/**
 * A path the caller gave, checked as text: relative, `/`-separated, no `..` above the root, no NUL, bounded length
 * and depth. Its names, in order (none for the root).
 */
export function relativeParts(given: unknown, what = 'path'): { rel: string; parts: string[] } {
  if (typeof given !== 'string') throw new BuiltinToolError(`${what} must be a string`);
  if (given.length > WORKSPACE_LIMITS.pathChars) throw new BuiltinToolError(`${what} is longer than ${WORKSPACE_LIMITS.pathChars} characters`);
  if (given.includes('\0')) throw new BuiltinToolError(`${what} holds a NUL character`);
  if (given.startsWith('/') || given.includes('\\')) throw new BuiltinToolError(`${what} ${JSON.stringify(given)} must be relative to the workspace, with / between names`);
  const rel = path.posix.normalize(given === '' ? '.' : given).replace(/\/+$/, '') || '.';
  if (rel === '..' || rel.startsWith('../')) throw new BuiltinToolError(`${what} ${JSON.stringify(given)} leaves the workspace`);
  const parts = rel === '.' ? [] : rel.split('/');
  if (parts.length > WORKSPACE_LIMITS.depth) throw new BuiltinToolError(`${what} is deeper than ${WORKSPACE_LIMITS.depth} directories`);
  return { rel, parts };
}

export const throughLink = (what: string, given: string) => new BuiltinToolError(`${what} ${JSON.stringify(given)} goes through a symbolic link, which the workspace does not follow`);

/**
 * A path the caller gave, inside its workspace (`relativeParts`), and no symbolic link on the way (a plugin with
 * filesystem access could have made one), so the result can never name a file outside the workspace.
 */
export async function resolveInside(root: string, given: unknown, what = 'path'): Promise<{ abs: string; rel: string }> {
  const { rel, parts } = relativeParts(given, what);
  let at = root;
  for (const part of parts) {
    at = path.join(at, part);
    const st = await lstat(at).catch(() => null);
    if (!st) break;
    if (st.isSymbolicLink()) throw throughLink(what, given as string);
  }
  const abs = path.join(root, ...parts);
  const real = await realpath(root);
  if (abs !== root && !abs.startsWith(`${root}${path.sep}`) && !abs.startsWith(`${real}${path.sep}`)) throw new BuiltinToolError(`${what} leaves the workspace`);
  return { abs, rel };
}

/** Bytes and entries a workspace holds (walked without recursion; stops counting past the entry limit). */
export async function workspaceUsage(root: string): Promise<{ bytes: number; entries: number }> {
  let bytes = 0;
  let entries = 0;
  const dirs = [root];
  while (dirs.length && entries <= WORKSPACE_LIMITS.entries) {
    const dir = dirs.pop()!;
    for (const e of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
      entries++;
      const p = path.join(dir, e.name);
      if (e.isDirectory()) dirs.push(p);
      else if (e.isFile()) bytes += (await lstat(p).catch(() => null))?.size ?? 0;
    }
  }
  return { bytes, entries };
}
