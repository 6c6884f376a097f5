import { isPlatformError } from '../core/errors/index.ts';
import { checkEgressUrl, egressFetch } from '../core/egress/index.ts';
import { BuiltinToolError, type Builtin, type BuiltinContext, type BuiltinDeps, type BuiltinOperation } from './builtin.ts';
import { CAPTURE_LIMITS, type CaptureInput, type CaptureKind, type CaptureResult } from './capture-types.ts';
import { writeInWorkspace } from './files.ts';
import type { PageInput } from './html-task.ts';
import { workspaceRoot } from './workspace-paths.ts';

const TASK = new URL('./html-task.ts', import.meta.url);
/** A page is read up to this size (most HTML pages are far smaller); past it the read fails. */
export const PAGE_MAX_BYTES = 5 * 1024 * 1024;
const PAGE_TASK_LIMITS = { timeoutMs: 15_000, onLimit: 'TOOL_PAGE_LIMIT' } as const;
const HTML = /^(text\/html|application\/xhtml\+xml)\b/i;

const urlArg = { type: 'string', minLength: 1, maxLength: 2048, description: 'An https URL of a public web page' };

/**
 * The page at `url`, fetched through egress (https, public addresses only, no redirects, 10 s, at most 5 MiB):
 * what the caller did not get is a tool error that says why.
 */
async function fetchPage(deps: BuiltinDeps, ctx: BuiltinContext, url: string): Promise<{ bytes: Buffer; type: string }> {
  let res;
  try {
    res = await egressFetch(url, { ...deps.egress, maxBytes: PAGE_MAX_BYTES, headers: { accept: 'text/html,application/xhtml+xml;q=0.9,text/plain;q=0.5', 'user-agent': 'agent-platform-browser/1.0' }, ...(ctx.signal ? { signal: ctx.signal } : {}) });
  } catch (err) {
    if (isPlatformError(err) && err.code.startsWith('EGRESS_')) throw new BuiltinToolError(`the page could not be read: ${err.message}`);
    throw err;
  }
  if (res.status !== 200) throw new BuiltinToolError(`the page answered HTTP ${res.status}`);
  const type = String(res.headers['content-type'] ?? '');
  if (!HTML.test(type) && !/^text\/plain\b/i.test(type)) throw new BuiltinToolError(`${url} is not a web page (${type || 'no content type'})`);
  return { bytes: res.body, type };
}

/** Reads a fetched page in the task pool (the caller's lane), moving its bytes there. */
async function readPage<T>(deps: BuiltinDeps, ctx: BuiltinContext, fn: string, page: { bytes: Buffer }, ...rest: unknown[]): Promise<T> {
  const input: PageInput = page.bytes.byteOffset === 0 && page.bytes.byteLength === page.bytes.buffer.byteLength ? page.bytes : Buffer.from(page.bytes);
  try {
    return await deps.tasks.run<T>(TASK, fn, [input, ...rest], PAGE_TASK_LIMITS, { tenant: ctx.caller.accountId, transfer: [input.buffer as ArrayBuffer], ...(ctx.signal ? { signal: ctx.signal } : {}) });
  } catch (err) {
    if (isPlatformError(err) && err.code === 'TOOL_PAGE_LIMIT') throw new BuiltinToolError(`reading the page was stopped: ${err.message}`, 'timeout');
    throw err;
  }
}

function pageOperation(name: string, operation: string, description: string, fn: string, extra: { properties?: Record<string, unknown>; required?: string[]; args?: (a: Record<string, unknown>) => unknown[] } = {}): BuiltinOperation {
  return {
    name,
    operation,
    description,
    readOnly: true,
    inputSchema: { type: 'object', properties: { url: urlArg, ...extra.properties }, required: ['url', ...(extra.required ?? [])], additionalProperties: false },
    async run(deps, ctx, a) {
      const url = String(a.url);
      const page = await fetchPage(deps, ctx, url);
      if (!HTML.test(page.type) && (fn === 'pageMarkdown' || fn === 'pageContent')) {
        // Plain text is its own markdown and content.
        const text = page.bytes.toString('utf8');
        const clipped = text.slice(0, 256 * 1024);
        return fn === 'pageMarkdown' ? { url, title: '', markdown: clipped, truncated: clipped.length < text.length } : { url, title: '', byline: null, excerpt: null, text: clipped, truncated: clipped.length < text.length };
      }
      if (!HTML.test(page.type)) throw new BuiltinToolError(`${url} is plain text, not HTML: read it with browser_content`);
      const out = await readPage<Record<string, unknown>>(deps, ctx, fn, page, url, ...(extra.args?.(a) ?? []));
      if (typeof out.error === 'string') throw new BuiltinToolError(out.error);
      return out;
    },
  };
}

const CAPTURE_TASK = new URL('./capture-task.ts', import.meta.url);
/** A capture's whole budget in the task pool: Chromium's start, the page's load, the capture, the close. */
const CAPTURE_TASK_LIMITS = { timeoutMs: 45_000, onLimit: 'TOOL_PAGE_LIMIT' } as const;

/** Where a capture is saved when the caller names no path: `captures/{host}-{time}.{ext}`. */
const defaultPath = (url: string, ext: string) => `captures/${new URL(url).hostname.replace(/[^a-z0-9.-]/gi, '_')}-${new Date().toISOString().replace(/[:.]/g, '-')}.${ext}`;

function captureOperation(name: string, kind: CaptureKind, description: string): BuiltinOperation {
  const saves = kind !== 'snapshot';
  return {
    name,
    operation: kind,
    description,
    readOnly: !saves,
    inputSchema: {
      type: 'object',
      properties: {
        url: urlArg,
        ...(saves ? { path: { type: 'string', maxLength: 1024, description: 'Where in your workspace to save it (default captures/{host}-{time})' } } : {}),
        ...(kind === 'screenshot'
          ? {
              width: { type: 'integer', minimum: 200, maximum: 1920, default: 1280 },
              height: { type: 'integer', minimum: 200, maximum: 1920, default: 800 },
              full_page: { type: 'boolean', default: false, description: `The whole page, at most ${CAPTURE_LIMITS.maxHeight} pixels tall` },
            }
          : {}),
      },
      required: ['url'],
      additionalProperties: false,
    },
    async run(deps, ctx, a) {
      if (deps.chromiumPath === null) throw new BuiltinToolError(`${name} needs Chromium, which is not installed on this node (PLATFORM_CHROMIUM_PATH)`);
      const url = String(a.url);
      try {
        checkEgressUrl(url, { allowLoopback: deps.egress.allowLoopback === true });
      } catch (err) {
        throw new BuiltinToolError(`the page could not be read: ${(err as Error).message}`);
      }
      // The workspace first: an anonymous caller is refused before a browser starts.
      if (saves) await workspaceRoot(deps, ctx);
      const input: CaptureInput = {
        url,
        kind,
        chromiumPath: deps.chromiumPath,
        egress: { ...(deps.egress.allowLoopback ? { allowLoopback: true } : {}), ...(deps.egress.ca ? { ca: deps.egress.ca } : {}) },
        width: Number(a.width ?? 1280),
        height: Number(a.height ?? 800),
        fullPage: a.full_page === true,
      };
      let r: CaptureResult;
      try {
        r = await deps.tasks.run<CaptureResult>(CAPTURE_TASK, 'capturePage', [input], CAPTURE_TASK_LIMITS, { tenant: ctx.caller.accountId, ...(ctx.signal ? { signal: ctx.signal } : {}) });
      } catch (err) {
        if (isPlatformError(err) && err.code === 'TOOL_PAGE_LIMIT') throw new BuiltinToolError(`the capture was stopped: ${err.message}`, 'timeout');
        throw err;
      }
      if (r.error !== null) throw new BuiltinToolError(r.error);
      const about = { url, title: r.title, requests: r.requests, blocked: r.blocked, javascript: r.javascript };
      if (!saves) return { ...about, snapshot: r.text };
      const saved = await writeInWorkspace(deps, ctx, a.path ?? defaultPath(url, kind === 'pdf' ? 'pdf' : 'png'), Buffer.from(r.bytes!));
      return { ...about, ...saved, type: kind === 'pdf' ? 'application/pdf' : 'image/png' };
    },
  };
}

export const BROWSER: Builtin = {
  id: 'builtin-browser',
  kind: 'Browser',
  family: 'browser',
  name: 'Browser',
  namespace: 'browser',
  description: 'Reads public web pages through the platform egress rules: as Markdown, as text, their links, the elements a CSS selector matches, their structured data; with Chromium, screenshots, PDFs and accessibility snapshots.',
  sortOrder: 50,
  config: null,
  operations: [
    pageOperation('browser_markdown', 'markdown', 'The readable part of a web page as Markdown (at most 256 KiB).', 'pageMarkdown'),
    pageOperation('browser_content', 'content', 'The readable text of a web page, with its title, byline and excerpt (at most 256 KiB).', 'pageContent'),
    pageOperation('browser_links', 'links', 'The http(s) links of a web page, absolute, each once, with their text (at most 500).', 'pageLinks'),
    pageOperation('browser_scrape', 'scrape', 'The elements of a web page a CSS selector matches: tag, text and attributes (at most 100).', 'pageScrape', {
      properties: { selector: { type: 'string', minLength: 1, maxLength: 500 } },
      required: ['selector'],
      args: (a) => [String(a.selector)],
    }),
    pageOperation('browser_extract_json', 'extract_json', "A web page's structured data: its JSON-LD blocks and its meta and OpenGraph properties.", 'pageJson'),
    captureOperation('browser_screenshot', 'screenshot', 'A PNG screenshot of a web page rendered by headless Chromium, saved in your workspace.'),
    captureOperation('browser_pdf', 'pdf', 'A web page printed to PDF by headless Chromium, saved in your workspace.'),
    captureOperation('browser_snapshot', 'snapshot', "A web page's accessibility tree as rendered by headless Chromium (roles, names, text; YAML, at most 256 KiB)."),
  ],
};
