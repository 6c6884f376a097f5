import type { IncomingHttpHeaders } from 'node:http';
import { PlatformError } from '../../runtime/index.ts';
import type { AgentExtension } from './schemas.ts';

/**
 * The service parameters of an A2A request (A2A 1.0 §3.6, spec §4.3): the protocol version and the extensions,
 * both carried as HTTP headers.
 */

export const PROTOCOL_VERSION = '1.0';
export const EXTENSIONS_HEADER = 'a2a-extensions';
const LEGACY_EXTENSIONS_HEADER = 'x-a2a-extensions';
const VERSION_RE = /^(\d{1,9})\.(\d{1,9})(?:\.\d{1,9})?$/;

const joined = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v.join(',') : v);

/**
 * The version a request asks for, from the `A2A-Version` header or else the `A2A-Version` query parameter. Only the
 * major and minor count (`1.0.1` is `1.0`). A missing or empty value is read as 1.0, not as A2A's 0.3: our clients
 * were written against the spec, which never asked them to send it (decided in the A2A notes). Anything but 1.0 —
 * an explicit 0.3 included — is -32009.
 */
export function checkVersion(headers: IncomingHttpHeaders, query: unknown): void {
  const fromQuery = typeof query === 'object' && query !== null ? (query as Record<string, unknown>)['A2A-Version'] : undefined;
  const raw = (joined(headers['a2a-version']) ?? (typeof fromQuery === 'string' ? fromQuery : undefined) ?? '').trim();
  if (raw === '') return;
  const m = VERSION_RE.exec(raw);
  const asked = m ? `${Number(m[1])}.${Number(m[2])}` : null;
  if (asked === PROTOCOL_VERSION) return;
  throw new PlatformError(
    'A2A_VERSION_NOT_SUPPORTED',
    `A2A-Version ${JSON.stringify(raw.slice(0, 64))} is not supported: this gateway speaks A2A ${PROTOCOL_VERSION} only`,
  );
}

/**
 * The extensions a request activates: the URIs listed in `A2A-Extensions` (and the legacy `X-A2A-Extensions`),
 * comma-separated, that the agent offers, in the order first asked; unknown URIs are ignored. An extension the
 * agent marks required but the client did not ask for is -32008.
 */
export function negotiateExtensions(headers: IncomingHttpHeaders, offered: readonly AgentExtension[]): string[] {
  const asked = [joined(headers[EXTENSIONS_HEADER]), joined(headers[LEGACY_EXTENSIONS_HEADER])]
    .filter((v): v is string => v !== undefined)
    .flatMap((v) => v.split(','))
    .map((uri) => uri.trim());
  const known = new Set(offered.map((e) => e.uri));
  const active = [...new Set(asked.filter((uri) => known.has(uri)))];
  const missing = offered.filter((e) => e.required && !active.includes(e.uri));
  if (missing.length) {
    throw new PlatformError('A2A_EXTENSION_REQUIRED', `this agent requires the extension${missing.length > 1 ? 's' : ''} ${missing.map((e) => e.uri).join(', ')}: list ${missing.length > 1 ? 'them' : 'it'} in A2A-Extensions`);
  }
  return active;
}

/** The response header that echoes what was activated; absent when nothing was. */
export const extensionsEcho = (active: readonly string[]): Record<string, string> => (active.length ? { 'A2A-Extensions': active.join(', ') } : {});
