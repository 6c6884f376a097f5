import { ERRORS, type ErrorCode, type ErrorKind } from './codes.ts';

const BRAND = Symbol.for('platform.error');

export interface WireError {
  code: string;
  message: string;
  data?: unknown;
}

/**
 * The one error of the platform: a stable `code` from the registry (codes.ts), its `kind` (what class of failure it
 * is, which each surface maps to its own wire format in one place) and a `fix` (how a client or operator gets past
 * it). Branded with a global symbol so that `instanceof` holds across module copies and worker realms; it crosses
 * the bus and worker boundaries as `{code, message, data}` and is rebuilt with `fromWire`.
 */
export class PlatformError extends Error {
  override readonly name = 'PlatformError';
  readonly kind: ErrorKind;
  readonly fix: string;
  readonly data: unknown;
  declare readonly [BRAND]: true;

  constructor(
    readonly code: ErrorCode,
    message?: string,
    opts: { cause?: unknown; data?: unknown } = {},
  ) {
    super(message ?? ERRORS[code].message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.kind = ERRORS[code].kind;
    this.fix = ERRORS[code].fix;
    this.data = opts.data;
    Object.defineProperty(this, BRAND, { value: true });
  }

  static override [Symbol.hasInstance](x: unknown): boolean {
    return typeof x === 'object' && x !== null && (x as Record<symbol, unknown>)[BRAND] === true;
  }

  toWire(): WireError {
    return { code: this.code, message: this.message, ...(this.data !== undefined ? { data: this.data } : {}) };
  }
}

export const isErrorCode = (code: unknown): code is ErrorCode => typeof code === 'string' && Object.hasOwn(ERRORS, code);

/** Whether `err` is a PlatformError (or carries a registered code), optionally of one code or one kind. */
export function isPlatformError(err: unknown, code?: ErrorCode): err is PlatformError {
  const c = (err as { code?: unknown } | null)?.code;
  return isErrorCode(c) && (code === undefined || c === code);
}

/** Rebuilds an error that crossed the bus or a worker boundary; an unregistered code becomes PLT_REMOTE_ERROR. */
export function fromWire(w: { code?: unknown; message?: unknown; data?: unknown }): PlatformError {
  const message = typeof w.message === 'string' ? w.message : 'remote error';
  return isErrorCode(w.code) ? new PlatformError(w.code, message, { data: w.data }) : new PlatformError('PLT_REMOTE_ERROR', message, { data: { code: w.code } });
}

/**
 * Any thrown value as a PlatformError: itself, a rebuilt one when it carries a registered code (errors of the store
 * and the bus, which cannot import this module, carry registered codes), else PLT_INTERNAL with the original as cause.
 */
export function asPlatformError(err: unknown): PlatformError {
  if (err instanceof PlatformError) return err;
  const e = err as { code?: unknown; message?: unknown; data?: unknown } | null;
  if (e && isErrorCode(e.code)) {
    const rebuilt = new PlatformError(e.code, typeof e.message === 'string' ? e.message : undefined, { cause: err, data: e.data });
    return rebuilt;
  }
  return new PlatformError('PLT_INTERNAL', undefined, { cause: err });
}
