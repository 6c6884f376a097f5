import { Readable } from 'node:stream';

/**
 * Server-Sent Events on the response to a POST (spec §1 rule 4: the platform's only streaming form). Each event is
 * one `data:` line holding one JSON value, then a blank line: no event names, ids or keep-alive comments, so every
 * frame is exactly what the protocol defines.
 */
export const SSE_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache, no-transform', 'x-accel-buffering': 'no' } as const;

/** One frame. JSON never holds a raw newline, so a value always fits on its one `data:` line. */
export const sseFrame = (value: unknown) => `data: ${JSON.stringify(value)}\n\n`;

export interface SseSource<T> {
  /** What is streamed; the stream ends when it does. */
  events: AsyncIterable<T>;
  /** The frame of one event. */
  frame(event: T): unknown;
  /** The last frame, when the source fails mid-stream: the failure as an ordinary frame, then the end. */
  error(err: unknown): unknown;
  /** Whether the stream ends after this event even if the source has more (it is told to stop). */
  last?(event: T): boolean;
  /** How a frame is written: by default one `data:` line of JSON (sseFrame); a protocol's own encoder otherwise. */
  encode?(frame: unknown): string | Uint8Array;
}

/**
 * The frames of a source as a readable stream for a reply. The source is read one event at a time, as the client
 * takes the frames (backpressure). A failure of the source, or of `frame`, becomes the error frame and ends the
 * stream. When the client goes away the stream is destroyed and the source's iterator returned at once (a producer
 * waiting on live updates should also watch its abort signal: a pending `next` delays an async generator's return).
 */
export function sseStream<T>(source: SseSource<T>): Readable {
  const it = source.events[Symbol.asyncIterator]();
  const encode = source.encode ?? sseFrame;
  let done = false;
  const finish = () => {
    if (done) return;
    done = true;
    Promise.resolve(it.return?.()).catch(() => {});
  };
  return new Readable({
    async read() {
      if (done) return;
      try {
        const r = await it.next();
        if (this.destroyed) return;
        if (r.done) {
          done = true;
          this.push(null);
          return;
        }
        this.push(encode(source.frame(r.value)));
        if (source.last?.(r.value)) {
          finish();
          this.push(null);
        }
      } catch (err) {
        if (this.destroyed || done) return;
        finish();
        this.push(encode(source.error(err)));
        this.push(null);
      }
    },
    destroy(err, callback) {
      finish();
      callback(err);
    },
  });
}

/**
 * An iterable that yields `first` and then the rest of `iterator`: lets a caller pull the first event before it
 * commits to a stream, so a failure that happens before anything was produced is answered as a plain response.
 */
export function prepend<T>(first: T, iterator: AsyncIterator<T>): AsyncIterable<T> {
  return {
    [Symbol.asyncIterator]() {
      let sentFirst = false;
      return {
        next: () => (sentFirst ? iterator.next() : ((sentFirst = true), Promise.resolve({ done: false as const, value: first }))),
        return: async () => (await iterator.return?.(), { done: true as const, value: undefined }),
      };
    },
  };
}
