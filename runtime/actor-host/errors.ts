/** Stable codes of the actor runtime. They cross the bus as `{code, message}` and are mapped to the wire at the edge. */
export const ActorErrorCode = {
  NotFound: 'PLT_ACTOR_NOT_FOUND',
  Exists: 'PLT_ACTOR_EXISTS',
  UnknownKind: 'PLT_ACTOR_UNKNOWN_KIND',
  Failed: 'PLT_ACTOR_FAILED',
  Conflict: 'PLT_ACTOR_CONFLICT',
  Stopped: 'PLT_ACTOR_HOST_STOPPED',
  /** No owner answered before the deadline (node failure, handoff, NATS down): retryable. */
  Unavailable: 'PLT_ACTOR_UNAVAILABLE',
} as const;
export type ActorErrorCode = (typeof ActorErrorCode)[keyof typeof ActorErrorCode];

export class ActorError extends Error {
  override readonly name = 'ActorError';
  constructor(
    readonly code: ActorErrorCode,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

export function isActorError(err: unknown, code?: ActorErrorCode): err is { code: ActorErrorCode; message: string } {
  const c = (err as { code?: unknown })?.code;
  return typeof c === 'string' && c.startsWith('PLT_ACTOR_') && (code === undefined || c === code);
}
