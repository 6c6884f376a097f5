/**
 * A whole model answer (its bytes read already) as the Response the AI SDK takes from its `fetch`, without what a
 * WHATWG Response builds around a body: `new Response(bytes)` makes a web ReadableStream with its controller and runs
 * the body through WebIDL conversions, which was a third of the model client's cost on the main thread in the
 * a2a-send profile (two model turns per tool-calling task).
 *
 * The AI SDK reads a whole answer through `body.getReader()` (`readResponseWithSizeLimit`) and looks at `ok`,
 * `status`, `statusText` and `headers`; the rest of the Response surface (`text`, `json`, `arrayBuffer`, `clone`) is
 * here too, each reading the same bytes once as a Response would (a second read throws the same TypeError). Classes,
 * not closures: an answer costs two small objects.
 */
export interface WholeInit {
  status: number;
  statusText?: string;
  headers: Headers;
  url: string;
}

export function wholeResponse(bytes: Uint8Array, init: WholeInit): Response {
  return new WholeResponse(bytes, init) as unknown as Response;
}

class WholeResponse {
  readonly ok: boolean;
  readonly status: number;
  readonly statusText: string;
  readonly headers: Headers;
  readonly url: string;
  readonly redirected = false;
  readonly type = 'basic';
  readonly body: OneChunkBody;

  constructor(
    private readonly content: Uint8Array,
    private readonly init: WholeInit,
  ) {
    this.ok = init.status >= 200 && init.status < 300;
    this.status = init.status;
    this.statusText = init.statusText ?? '';
    this.headers = init.headers;
    this.url = init.url;
    this.body = new OneChunkBody(content);
  }

  get bodyUsed(): boolean {
    return this.body.used;
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    const b = this.body.take();
    return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;
  }

  async bytes(): Promise<Uint8Array> {
    return this.body.take();
  }

  async text(): Promise<string> {
    return new TextDecoder().decode(this.body.take());
  }

  async json(): Promise<unknown> {
    return JSON.parse(await this.text());
  }

  async blob(): Promise<Blob> {
    return new Blob([this.body.take()]);
  }

  async formData(): Promise<never> {
    throw new TypeError('a model answer is not form data');
  }

  clone(): Response {
    if (this.body.used) throw new TypeError('Response.clone: Body has already been consumed.');
    return wholeResponse(this.content, this.init);
  }
}

/** The body: its bytes once, through a reader (one chunk, then done) or whole. */
class OneChunkBody {
  used = false;
  readonly locked = false;
  private given = false;

  constructor(private readonly bytes: Uint8Array) {}

  take(): Uint8Array {
    if (this.used) throw new TypeError('Body is unusable: Body has already been read');
    this.used = true;
    return this.bytes;
  }

  getReader(): this {
    this.take();
    return this;
  }

  async read(): Promise<{ done: true; value: undefined } | { done: false; value: Uint8Array }> {
    if (this.given || this.bytes.byteLength === 0) return { done: true, value: undefined };
    this.given = true;
    return { done: false, value: this.bytes };
  }

  async cancel(): Promise<void> {
    this.used = true;
    this.given = true;
  }

  releaseLock(): void {}

  get closed(): Promise<undefined> {
    return Promise.resolve(undefined);
  }
}
