/**
 * A whole model answer (its bytes read already) as the Response the AI SDK takes from its `fetch`, without what a
 * WHATWG Response builds around a body: `new Response(bytes)` makes a web ReadableStream with its controller and runs
 * the body through WebIDL conversions, which was a third of the model client's cost on the main thread in the
 * a2a-send profile (two model turns per tool-calling task).
 *
 * The AI SDK reads a whole answer through `body.getReader()` (`readResponseWithSizeLimit`) and looks at `ok`,
 * `status`, `statusText` and `headers`; the rest of the Response surface (`text`, `json`, `arrayBuffer`, `clone`) is
 * here too, each reading the same bytes once as a Response would (a second read throws the same TypeError).
 */
export function wholeResponse(bytes: Uint8Array, init: { status: number; statusText?: string; headers: Headers; url: string }): Response {
  let used = false;
  const take = (): Uint8Array => {
    if (used) throw new TypeError('Body is unusable: Body has already been read');
    used = true;
    return bytes;
  };
  const body = {
    locked: false,
    getReader() {
      const chunk = take();
      let given = false;
      return {
        read: async (): Promise<{ done: true; value: undefined } | { done: false; value: Uint8Array }> => {
          if (given || chunk.byteLength === 0) return { done: true, value: undefined };
          given = true;
          return { done: false, value: chunk };
        },
        cancel: async () => {
          given = true;
        },
        releaseLock() {},
        closed: Promise.resolve(undefined),
      };
    },
    cancel: async () => {
      used = true;
    },
  };
  const response = {
    ok: init.status >= 200 && init.status < 300,
    status: init.status,
    statusText: init.statusText ?? '',
    headers: init.headers,
    url: init.url,
    redirected: false,
    type: 'basic' as Response['type'],
    body: body as unknown as ReadableStream<Uint8Array>,
    get bodyUsed() {
      return used;
    },
    arrayBuffer: async () => {
      const b = take();
      return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;
    },
    bytes: async () => take(),
    text: async () => new TextDecoder().decode(take()),
    json: async () => JSON.parse(new TextDecoder().decode(take())) as unknown,
    blob: async () => new Blob([take()]),
    formData: async () => {
      throw new TypeError('a model answer is not form data');
    },
    clone: (): Response => {
      if (used) throw new TypeError('Response.clone: Body has already been consumed.');
      return wholeResponse(bytes, init);
    },
  };
  return response as unknown as Response;
}
