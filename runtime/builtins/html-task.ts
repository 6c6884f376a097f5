// Runs in a worker of the node's task pool: reading a fetched page (linkedom's DOM, Mozilla Readability, Turndown).
// Parsing megabytes of a stranger's HTML takes the thread for as long as it takes; here it takes a worker's, under
// the pool's deadline and heap cap, never the node's.
import { Readability } from '@mozilla/readability';
import { parseHTML } from 'linkedom';
import TurndownService from 'turndown';

/** What a page read answers at most: characters of text, links, elements. */
export const PAGE_LIMITS = { chars: 256 * 1024, links: 500, elements: 100, elementChars: 2000 } as const;

const clip = (text: string, max: number) => ({ text: text.length > max ? text.slice(0, max) : text, truncated: text.length > max });
const squash = (s: string | null | undefined) => (s ?? '').replace(/\s+/g, ' ').trim();

type Doc = ReturnType<typeof parseHTML>['document'];
type El = ReturnType<Doc['querySelectorAll']>[number];

/** The page as the node fetched it: its bytes (moved to this thread, decoded here) or text. */
export type PageInput = Uint8Array | string;

function documentOf(page: PageInput): Doc {
  return parseHTML(typeof page === 'string' ? page : Buffer.from(page.buffer, page.byteOffset, page.byteLength).toString('utf8')).document;
}
// Readability is typed against the DOM lib, which this project does not load; linkedom's document is what it reads.
const readable = (doc: Doc) => new Readability(doc as never).parse();

function absolute(href: string, base: string): string | null {
  try {
    const u = new URL(href, base);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.href : null;
  } catch {
    return null;
  }
}

/** The readable part of the page (Readability), as Markdown. */
export function pageMarkdown(html: PageInput, url: string) {
  const doc = documentOf(html);
  const title = squash(doc.querySelector('title')?.textContent);
  const article = readable(doc);
  const td = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-' });
  td.remove(['script', 'style', 'noscript']);
  const md = td.turndown(article?.content ?? doc.body?.innerHTML ?? '');
  const { text, truncated } = clip(md, PAGE_LIMITS.chars);
  return { url, title: article?.title || title, markdown: text, truncated };
}

/** The readable text of the page, with its title, byline and excerpt. */
export function pageContent(html: PageInput, url: string) {
  const doc = documentOf(html);
  const article = readable(doc);
  const { text, truncated } = clip(squash(article?.textContent ?? doc.body?.textContent), PAGE_LIMITS.chars);
  return { url, title: article?.title ?? '', byline: article?.byline ?? null, excerpt: article?.excerpt ?? null, text, truncated };
}

/** Every http(s) link of the page, absolute, once each, with its text. */
export function pageLinks(html: PageInput, url: string) {
  const doc = documentOf(html);
  const seen = new Set<string>();
  const links: { url: string; text: string }[] = [];
  let truncated = false;
  for (const a of doc.querySelectorAll('a[href]')) {
    const href = absolute(a.getAttribute('href') ?? '', url);
    if (!href || seen.has(href)) continue;
    if (links.length >= PAGE_LIMITS.links) {
      truncated = true;
      break;
    }
    seen.add(href);
    links.push({ url: href, text: squash(a.textContent).slice(0, 300) });
  }
  return { url, links, truncated };
}

/** The elements a CSS selector matches: their text, and their attributes. */
export function pageScrape(html: PageInput, url: string, selector: string) {
  const doc = documentOf(html);
  let found: El[];
  try {
    found = [...doc.querySelectorAll(selector)];
  } catch (err) {
    return { error: `the selector ${JSON.stringify(selector)} is not valid CSS: ${(err as Error).message}` };
  }
  const elements = found.slice(0, PAGE_LIMITS.elements).map((e) => ({
    tag: e.tagName.toLowerCase(),
    text: squash(e.textContent).slice(0, PAGE_LIMITS.elementChars),
    attributes: Object.fromEntries([...e.attributes].slice(0, 20).map((a) => [a.name, a.value.slice(0, 500)])),
  }));
  return { url, selector, count: found.length, elements, truncated: found.length > PAGE_LIMITS.elements };
}

/** The page's structured data: its JSON-LD blocks (those that parse) and its OpenGraph and meta properties. */
export function pageJson(html: PageInput, url: string) {
  const doc = documentOf(html);
  const jsonLd: unknown[] = [];
  for (const s of doc.querySelectorAll('script[type="application/ld+json"]')) {
    try {
      jsonLd.push(JSON.parse(s.textContent ?? ''));
    } catch {
      // A block that is no JSON is skipped: the page's mistake, not the caller's.
    }
    if (jsonLd.length >= 20) break;
  }
  const meta: Record<string, string> = {};
  for (const m of doc.querySelectorAll('meta[content]')) {
    const key = m.getAttribute('property') ?? m.getAttribute('name');
    if (key && Object.keys(meta).length < 100) meta[key.slice(0, 100)] = (m.getAttribute('content') ?? '').slice(0, 1000);
  }
  const out = { url, title: squash(doc.querySelector('title')?.textContent), json_ld: jsonLd, meta };
  return JSON.stringify(out).length > PAGE_LIMITS.chars ? { url, title: out.title, json_ld: [], meta, truncated: true } : { ...out, truncated: false };
}
