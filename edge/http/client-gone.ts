import type { ServerResponse } from 'node:http';

/**
 * A signal that fires when the client leaves before its answer ends, so the runtime stops work nobody waits for (a
 * model turn, a worker's parse). It also fires at once for a client that left before this was called: one that hung up
 * while the request's hooks ran (a lookup, admission) has already closed its response, and would otherwise never
 * cancel anything.
 */
export function clientGone(res: ServerResponse): AbortSignal {
  const abort = new AbortController();
  const gone = () => res.writableFinished || abort.abort();
  if (res.destroyed) gone();
  else res.once('close', gone);
  return abort.signal;
}
