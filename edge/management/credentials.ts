import type { IncomingHttpHeaders } from 'node:http';

export type CredentialForm = 'authorization-bearer' | 'authorization-apikey' | 'api-key' | 'x-api-key';

export type CredentialSlot =
  | { ok: true; credential: string; form: CredentialForm }
  | { ok: false; reason: 'missing' | 'malformed' };

const TOKEN_CHARS = /^[\x21-\x7e]+$/;

function single(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v.join(',') : v;
}

/**
 * Finds the management credential in the four header forms, in the spec's order: `Authorization: Bearer`,
 * `Authorization: ApiKey`, `API-Key`, `X-API-Key`. The first form present decides; cookies and query strings are
 * never consulted. A value that is empty or has spaces or commas (two values folded together) is malformed.
 */
export function readCredential(headers: IncomingHttpHeaders): CredentialSlot {
  const candidates: [CredentialForm, string | undefined][] = [];
  const authorization = single(headers.authorization)?.trim();
  let unsupportedScheme = false;
  if (authorization) {
    const m = /^(\S+)(?:\s+(.*))?$/.exec(authorization)!;
    const scheme = m[1]!.toLowerCase();
    if (scheme === 'bearer') candidates.push(['authorization-bearer', m[2] ?? '']);
    else if (scheme === 'apikey') candidates.push(['authorization-apikey', m[2] ?? '']);
    else unsupportedScheme = true;
  }
  candidates.push(['api-key', single(headers['api-key'])], ['x-api-key', single(headers['x-api-key'])]);
  for (const [form, raw] of candidates) {
    if (raw === undefined) continue;
    const credential = raw.trim();
    if (!TOKEN_CHARS.test(credential) || credential.includes(',')) return { ok: false, reason: 'malformed' };
    return { ok: true, credential, form };
  }
  return { ok: false, reason: unsupportedScheme ? 'malformed' : 'missing' };
}
