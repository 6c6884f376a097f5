import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';

/**
 * Two limits on raw connections, below HTTP, so that no client can hold a node's sockets or memory by what it does
 * (or fails to do) on the wire:
 *
 * - a cap on the connections one remote address holds open at once: the next one is answered with a ready-made
 *   refusal and closed before any request on it is read;
 * - a write timeout: a socket with output queued that the client has not taken for `writeTimeoutMs` is reset. A
 *   client that asks for a large answer (or opens a stream) and never reads would otherwise pin the queued bytes, and
 *   the handler producing them, for as long as it keeps the connection open. Sockets with nothing queued (an idle
 *   keep-alive connection, a quiet event stream) are never timed out here: waiting for the server is not stalling it.
 */
export interface ConnectionGuardOptions {
  /** Open connections one remote address may hold; 0 turns the cap off. */
  maxPerAddress: number;
  /** How long queued output may go without progress before the socket is reset; 0 turns the timeout off. */
  writeTimeoutMs: number;
  /** How often the tracked sockets are swept (default: a quarter of the write timeout, at most a second). */
  sweepMs?: number;
  /** Bytes written to a refused connection before it is closed (a complete HTTP response; empty over TLS). */
  refusal: string;
  logger?: Pick<Logger, 'debug' | 'info'>;
}

export interface ConnectionGuard {
  stop(): void;
}

interface Tracked {
  address: string | undefined;
  /** Progress marker at the last sweep that found output queued, and when it last changed. */
  marker: string;
  since: number;
}

/**
 * How far the socket's queued output has got. `bytesWritten` alone is no measure: it also counts bytes still queued
 * in the stream, so a handler that keeps writing into a socket the client never reads would look like progress.
 * Bytes whose write completed (`bytesWritten - writableLength`) do not move while one large chunk is half-way
 * through the kernel, so the libuv queue's size (what remains of the chunks handed to the handle) is part of the
 * marker too: a slow reader taking a large answer bit by bit keeps its connection.
 */
function progressMarker(socket: Socket): string {
  return `${socket.bytesWritten - socket.writableLength}/${handleQueue(socket)}`;
}

/**
 * Bytes waiting in the socket's libuv handle. Over TLS this is the only sign of output waiting on the TCP socket the
 * guard watches: the TLS layer writes to that socket's handle directly, so its stream's own queue stays empty.
 */
function handleQueue(socket: Socket): number {
  return (socket as unknown as { _handle?: { writeQueueSize?: number } | null })._handle?.writeQueueSize ?? 0;
}

export function installConnectionGuard(server: Server, opts: ConnectionGuardOptions): ConnectionGuard {
  if (opts.maxPerAddress <= 0 && opts.writeTimeoutMs <= 0) return { stop: () => {} };
  const perAddress = new Map<string, number>();
  const tracked = new Map<Socket, Tracked>();
  const refusal = Buffer.from(opts.refusal);

  const release = (socket: Socket) => {
    const t = tracked.get(socket);
    if (!t) return;
    tracked.delete(socket);
    if (t.address === undefined) return;
    const n = (perAddress.get(t.address) ?? 1) - 1;
    if (n <= 0) perAddress.delete(t.address);
    else perAddress.set(t.address, n);
  };

  // Runs after Node's own connection listener, so the HTTP parser is attached but has read nothing yet.
  const onConnection = (socket: Socket) => {
    const address = socket.remoteAddress;
    if (opts.maxPerAddress > 0 && address !== undefined) {
      const open = perAddress.get(address) ?? 0;
      if (open >= opts.maxPerAddress) {
        opts.logger?.debug({ remoteAddress: address, open }, 'connection refused: too many connections from one address');
        // Destroyed in the same tick as the write: nothing the client sent is ever parsed, so no request on a refused
        // connection reaches a handler. The refusal is small enough for the kernel to take at once.
        socket.write(refusal);
        socket.destroy();
        return;
      }
      perAddress.set(address, open + 1);
    }
    tracked.set(socket, { address: opts.maxPerAddress > 0 ? address : undefined, marker: '', since: 0 });
    socket.once('close', () => release(socket));
  };
  server.on('connection', onConnection);

  let timer: NodeJS.Timeout | undefined;
  if (opts.writeTimeoutMs > 0) {
    const sweepMs = opts.sweepMs ?? Math.max(10, Math.min(1000, Math.floor(opts.writeTimeoutMs / 4)));
    // One timer for every socket, not one per write: a sweep is a pass over a map, cheap next to the writes it watches.
    timer = setInterval(() => {
      const now = Date.now();
      for (const [socket, t] of tracked) {
        if (socket.destroyed) continue;
        if (socket.writableLength === 0 && handleQueue(socket) === 0) {
          t.marker = '';
          continue;
        }
        const marker = progressMarker(socket);
        if (marker !== t.marker) {
          t.marker = marker;
          t.since = now;
        } else if (now - t.since >= opts.writeTimeoutMs) {
          opts.logger?.info({ remoteAddress: socket.remoteAddress, queuedBytes: socket.writableLength }, 'connection reset: the client took none of its queued output in time');
          // A reset, not a close: a closed socket's unsent bytes would stay in the kernel, probing a client that does
          // not read, for minutes.
          socket.resetAndDestroy();
        }
      }
    }, sweepMs);
    // The sweep must not keep a process alive that has nothing else to do.
    timer.unref();
  }

  const stop = () => {
    if (timer) clearInterval(timer);
    timer = undefined;
    server.off('connection', onConnection);
  };
  server.once('close', stop);

  return { stop };
}
