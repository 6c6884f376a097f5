import net from 'node:net';
import { addressClass, isForbiddenName, type AddressClass } from '../core/egress/index.ts';
import { PlatformError } from '../core/errors/index.ts';

/** Limits of push notification configs (spec §4.3; agents-and-a2a note §7). */
export const PUSH_LIMITS = {
  /** Characters of a webhook url. */
  urlChars: 2048,
  /** Characters of a token and of credentials: each travels in one HTTP header. */
  secretChars: 4096,
  /** Configs one task may hold. */
  configsPerTask: 10,
  /** Page size of ListTaskPushNotificationConfigs: default and maximum. */
  pageSize: 50,
  maxPageSize: 100,
} as const;

/** What each refused address class is called in a refusal. */
const CLASS_TEXT: Record<AddressClass, string> = {
  metadata: 'a cloud metadata address',
  loopback: 'a loopback address',
  private: 'a private address',
  'link-local': 'a link-local address',
  shared: 'a shared (carrier-grade NAT) address',
  unspecified: 'an unspecified address',
  multicast: 'a multicast address',
  reserved: 'a reserved address',
  translator: 'a NAT64 or Teredo address, whose IPv4 end cannot be judged',
  invalid: 'not a valid address',
};

const urlRefused = (rule: string) => new PlatformError('A2A_PUSH_URL_REFUSED', `Push notification url refused: ${rule}`);
const isLoopbackName = (host: string) => host === 'localhost' || host.endsWith('.localhost');

/**
 * The URL rules a webhook must pass when it is registered (spec §4.3, §7): https only, no userinfo, a public host, at
 * most 2048 characters. Only what the URL itself says is judged here: a literal address by its range (IPv4 inside
 * IPv6 by the IPv4), and the names that always mean this machine or a metadata service (`localhost`, `*.localhost`,
 * `metadata.google.internal`, `*.internal`, ...). Other names are not resolved now; every delivery resolves and vets
 * them again. `allowLoopback` (the operator's development switch) admits loopback hosts, over plain http too.
 * Each refusal is A2A_PUSH_URL_REFUSED, naming the rule that failed.
 */
export function checkPushUrl(raw: string, opts: { allowLoopback: boolean }): URL {
  if (raw.length > PUSH_LIMITS.urlChars) throw urlRefused(`it is ${raw.length} characters long; the limit is ${PUSH_LIMITS.urlChars}`);
  if (/[\u0000-\u0020\u007f]/.test(raw)) throw urlRefused('it holds a space or a control character');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw urlRefused('it is not an absolute URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw urlRefused(`the scheme must be https, not ${url.protocol.slice(0, -1)}`);
  if (url.username !== '' || url.password !== '') throw urlRefused('it carries userinfo (user:password@); send credentials in authentication instead');
  // The WHATWG parser has already normalized the host: an IPv4 in any notation is dotted, an IPv6 is bracketed.
  const host = url.hostname.toLowerCase();
  const literal = host.startsWith('[') || net.isIPv4(host);
  const cls = literal ? addressClass(host) : null;
  const loopback = literal ? cls === 'loopback' : isLoopbackName(host.replace(/\.$/, ''));
  if (loopback && opts.allowLoopback) return url;
  if (cls) throw urlRefused(`the host ${url.hostname} is ${CLASS_TEXT[cls]}; only public hosts receive notifications`);
  if (!literal && isForbiddenName(host)) {
    throw urlRefused(`the host ${url.hostname} is ${loopback ? 'a loopback name' : 'a cloud metadata or internal name'}; only public hosts receive notifications`);
  }
  if (url.protocol !== 'https:') throw urlRefused('the scheme must be https, not http');
  return url;
}

/** How a config authenticates to its webhook, as stored: scheme lowercased; both null without authentication. */
export interface PushSecrets {
  token: string | null;
  authScheme: 'bearer' | 'basic' | null;
  authCredentials: string | null;
}

const authRefused = (rule: string) => new PlatformError('A2A_PUSH_AUTH_REFUSED', `Push notification config refused: ${rule}`);

/** A value sent as an HTTP header must arrive exactly as registered: printable ASCII, no CR or LF, no outer spaces. */
function checkHeaderValue(what: string, value: string): void {
  if (value.length > PUSH_LIMITS.secretChars) throw authRefused(`${what} is ${value.length} characters long; the limit is ${PUSH_LIMITS.secretChars}`);
  if (/[\r\n]/.test(value)) throw authRefused(`${what} holds a CR or LF`);
  if (!/^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$/.test(value)) {
    throw authRefused(`${what} must be printable ASCII without leading or trailing spaces (it is sent as an HTTP header value)`);
  }
}

/**
 * The token and authentication rules (spec §4.3, note §7): scheme `bearer` or `basic` (any case) with credentials;
 * token and credentials fit in one header. An empty token is no token (proto3: empty means unset). Refusals are
 * A2A_PUSH_AUTH_REFUSED; a refusal never repeats the secret.
 */
export function checkPushSecrets(token: string | undefined, authentication: { scheme: string; credentials?: string } | undefined): PushSecrets {
  if (token) checkHeaderValue('token', token);
  if (!authentication) return { token: token || null, authScheme: null, authCredentials: null };
  const scheme = authentication.scheme.toLowerCase();
  if (scheme !== 'bearer' && scheme !== 'basic') {
    throw authRefused(`authentication scheme ${JSON.stringify(authentication.scheme.slice(0, 40))} is not supported; use bearer or basic`);
  }
  const credentials = authentication.credentials ?? '';
  if (credentials === '') throw authRefused(`authentication scheme ${scheme} needs credentials`);
  checkHeaderValue('authentication.credentials', credentials);
  return { token: token || null, authScheme: scheme, authCredentials: credentials };
}
