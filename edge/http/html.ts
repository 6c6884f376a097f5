import type { FastifyReply } from 'fastify';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ESCAPES[c]!);

/** Tagged template that escapes every interpolated value unless it is already `Html`. */
export class Html {
  constructor(readonly value: string) {}
  toString() {
    return this.value;
  }
}

export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0]!;
  values.forEach((v, i) => {
    const part = Array.isArray(v) ? v.map((x) => (x instanceof Html ? x.value : escapeHtml(String(x)))).join('') : v instanceof Html ? v.value : escapeHtml(String(v ?? ''));
    out += part + strings[i + 1]!;
  });
  return new Html(out);
}

const STYLE = `body{font-family:system-ui,sans-serif;background:#f4f5f7;color:#1d2330;margin:0}
main{max-width:28rem;margin:4rem auto;background:#fff;border-radius:8px;padding:2rem;box-shadow:0 1px 4px #0002}
h1{font-size:1.3rem;margin-top:0}label{display:block;margin:.8rem 0 .3rem;font-weight:600}
input{width:100%;box-sizing:border-box;padding:.55rem;border:1px solid #b8bfcc;border-radius:4px;font-size:1rem}
button{margin-top:1.2rem;padding:.6rem 1.2rem;border:0;border-radius:4px;font-size:1rem;cursor:pointer}
.primary{background:#2457d6;color:#fff}.secondary{background:#e3e6ec;color:#1d2330}
.code{font-family:ui-monospace,monospace;font-size:1.4rem;letter-spacing:.15em}
.error{background:#fde8e8;color:#8a1c1c;padding:.6rem;border-radius:4px}.ok{background:#e6f6ea;color:#1d5e2c;padding:.6rem;border-radius:4px}`;

const DEFAULT_CSP = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'";

export interface PageOptions {
  /** Replaces the page's stylesheet. */
  style?: string;
  /** Replaces the default policy, which forbids every script. */
  csp?: string;
  /** A same-origin script to load (the policy must allow it). */
  script?: string;
}

/** Sends a small server-rendered page with headers that forbid framing, caching and (by default) scripts. */
export function sendPage(reply: FastifyReply, status: number, title: string, body: Html, opts: PageOptions = {}) {
  const script = opts.script ? `<script src="${escapeHtml(opts.script)}" defer></script>` : '';
  return reply
    .code(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header('x-frame-options', 'DENY')
    .header('referrer-policy', 'no-referrer')
    .header('content-security-policy', opts.csp ?? DEFAULT_CSP)
    .send(`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${escapeHtml(title)}</title><style>${opts.style ?? STYLE}</style>${script}</head><body><main>${body.value}</main></body></html>`);
}
