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
