import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/** Why the edge turned a connection or request away before any surface saw it (a metric label: a fixed set). */
export type Refusal = 'malformed' | 'headers_too_large' | 'timeout' | 'tls' | 'too_many_connections';

/** Client errors that end a connection without anything to answer: not refusals. */
const GONE = new Set(['ECONNRESET', 'EPIPE']);

function reasonOf(code: string | undefined): Refusal {
  if (code === 'HPE_HEADER_OVERFLOW') return 'headers_too_large';
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return 'timeout';
  if (code && /^ERR_(SSL|TLS)_/.test(code)) return 'tls';
  return 'malformed';
}

/**
 * Counts what the listener refuses below HTTP routing, for the node's metrics, by watching the server rather than
 * changing the code that refuses: requests Node's parser rejects (`clientError`, answered by the listener), and
 * connections the connection guard refuses. The guard's `connection` listener was added when the server was made,
 * before this one, and destroys a refused socket at once: a socket already destroyed when this listener runs is one
 * it refused. The counts are plain numbers; the metrics read them at a scrape.
 */
export function countRefusals(server: Server): () => Readonly<Record<Refusal, number>> {
  const counts: Record<Refusal, number> = { malformed: 0, headers_too_large: 0, timeout: 0, tls: 0, too_many_connections: 0 };
  server.on('clientError', (err: NodeJS.ErrnoException) => {
    if (!GONE.has(err.code ?? '')) counts[reasonOf(err.code)]++;
  });
  server.on('connection', (socket: Socket) => {
    if (socket.destroyed) counts.too_many_connections++;
  });
  return () => counts;
}
