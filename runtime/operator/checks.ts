import { isUniqueViolation } from '../../store/index.ts';
import { PlatformError } from '../core/errors/index.ts';
import { BUILTINS, type Builtin } from '../builtins/index.ts';

// A handle becomes the DNS label `mcp-{handle}` or `agent-{handle}`: at most 63 characters with the longer prefix.
const HANDLE_RE = /^[a-z0-9](?:[a-z0-9-]{0,55}[a-z0-9])?$/;
export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** An operator command's own validation: ADMIN_INVALID with the message. */
export function need(cond: boolean, message: string): asserts cond {
  if (!cond) throw new PlatformError('ADMIN_INVALID', message);
}

export function validateHandle(handle: string) {
  need(HANDLE_RE.test(handle), `invalid handle ${JSON.stringify(handle)}: use 1-57 lowercase letters, digits and inner hyphens (it becomes a DNS label)`);
  need(!handle.includes('--'), `invalid handle ${JSON.stringify(handle)}: consecutive hyphens are reserved in DNS labels`);
}

/** Runs `fn`; a unique violation becomes ADMIN_CONFLICT naming what was taken. */
export async function unique<T>(what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (isUniqueViolation(err)) throw new PlatformError('ADMIN_CONFLICT', `${what} is already taken`);
    throw err;
  }
}

/**
 * The built-in a capability reference names: built-ins are named by their fixed ids (`builtin-files`), so a plugin
 * of the account may take any other name. Null for a reference that is no built-in id.
 */
export function builtinRef(ref: unknown): Builtin | null {
  if (typeof ref !== 'string' || !ref.startsWith('builtin-')) return null;
  const b = BUILTINS.find((x) => x.id === ref);
  if (!b) throw new PlatformError('ADMIN_NOT_FOUND', `no built-in ${JSON.stringify(ref)}: the built-ins are ${BUILTINS.map((x) => x.id).join(', ')}`);
  return b;
}
