import { isPlatformError } from '../core/errors/index.ts';

/**
 * A failure the caller should read (a missing file, a quota reached, code that threw): a tool error with this
 * message, not a platform error.
 */
export class BuiltinToolError extends Error {
  override readonly name = 'BuiltinToolError';
  constructor(
    message: string,
    readonly kind: 'component-error' | 'timeout' = 'component-error',
  ) {
    super(message);
  }
}

/**
 * Runs work of a feature a built-in stands for (builds, skills, schedules): a platform error it throws is one the
 * tool's caller should read, so it becomes the tool's own error, with its code.
 */
export async function asToolError<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (isPlatformError(err)) throw new BuiltinToolError(`${err.code}: ${err.message}`);
    throw err;
  }
}
