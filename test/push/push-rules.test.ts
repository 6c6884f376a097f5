import { describe, expect, it } from 'vitest';
import { addressClass, checkPushSecrets, checkPushUrl, isForbiddenAddress, isPlatformError, PUSH_LIMITS } from '../../runtime/index.ts';

/** The refusal a check throws: its code and message (fails the test when it does not throw). */
function refusal(fn: () => unknown): { code: string; kind: string; message: string } {
  try {
    fn();
  } catch (err) {
    if (!isPlatformError(err)) throw err;
    return { code: err.code, kind: err.kind, message: err.message };
  }
  throw new Error('expected a refusal');
}

const strict = { allowLoopback: false };
const dev = { allowLoopback: true };
const urlRefusal = (url: string, opts = strict) => refusal(() => checkPushUrl(url, opts));

/** Every blocked range of the note (agents-and-a2a §7), at an address inside it, with the class a refusal names. */
const BLOCKED: [string, string][] = [
  ['0.0.0.1', 'an unspecified address'],
  ['10.0.0.1', 'a private address'],
  ['10.255.255.255', 'a private address'],
  ['100.64.0.1', 'a shared (carrier-grade NAT) address'],
  ['100.127.255.254', 'a shared (carrier-grade NAT) address'],
  ['127.0.0.1', 'a loopback address'],
  ['127.255.255.254', 'a loopback address'],
  ['169.254.0.1', 'a link-local address'],
  ['172.16.0.1', 'a private address'],
  ['172.31.255.255', 'a private address'],
  ['192.0.0.8', 'a reserved address'],
  ['192.168.1.1', 'a private address'],
  ['198.18.0.1', 'a reserved address'],
  ['198.19.255.255', 'a reserved address'],
  ['224.0.0.1', 'a multicast address'],
  ['239.255.255.250', 'a multicast address'],
  ['240.0.0.1', 'a reserved address'],
  ['255.255.255.255', 'a reserved address'],
  ['[::]', 'an unspecified address'],
  ['[::1]', 'a loopback address'],
  ['[fc00::1]', 'a private address'],
  ['[fd12:3456::1]', 'a private address'],
  ['[fe80::1]', 'a link-local address'],
  ['[febf::1]', 'a link-local address'],
  ['[64:ff9b::a00:1]', 'a NAT64 or Teredo address, whose IPv4 end cannot be judged'],
  // ::ffff:0:0/96: judged by the IPv4 it carries.
  ['[::ffff:10.0.0.1]', 'a private address'],
  ['[::ffff:127.0.0.1]', 'a loopback address'],
  ['[::ffff:192.168.0.1]', 'a private address'],
  ['[::ffff:a9fe:a9fe]', 'a cloud metadata address'],
];

const METADATA = ['169.254.169.254', '[fd00:ec2::254]', '[::ffff:169.254.169.254]', '100.100.100.200'];

describe('push URL rules', () => {
  it.each(BLOCKED)('[A2A-PUSH-07] https://%s is refused as %s', (host, what) => {
    const r = urlRefusal(`https://${host}/hook`);
    expect(r).toMatchObject({ code: 'A2A_PUSH_URL_REFUSED', kind: 'invalid' });
    expect(r.message).toBe(`Push notification url refused: the host ${new URL(`https://${host}`).hostname} is ${what}; only public hosts receive notifications`);
  });

  it('[A2A-PUSH-07] the edges of each private range: the first address outside is public', () => {
    for (const host of ['9.255.255.255', '11.0.0.0', '100.63.255.255', '100.128.0.0', '126.255.255.255', '128.0.0.0', '169.253.255.255', '169.255.0.0', '172.15.255.255', '172.32.0.0', '192.167.255.255', '192.169.0.0', '198.17.255.255', '198.20.0.0', '223.255.255.255', '[fbff::1]', '[fe00::1]', '[2606:4700::1]', '[::ffff:8.8.8.8]']) {
      expect(checkPushUrl(`https://${host}/hook`, strict).hostname, host).toBeTruthy();
    }
    expect(addressClass('8.8.8.8')).toBeNull();
  });

  it('[A2A-PUSH-08] cloud metadata addresses and names are refused, naming the metadata rule', () => {
    for (const host of METADATA) {
      expect(urlRefusal(`https://${host}/latest/meta-data`).message, host).toMatch(/is a cloud metadata address; only public hosts/);
    }
    for (const host of ['metadata.google.internal', 'METADATA.GOOGLE.INTERNAL.', 'metadata', 'metadata.goog', 'instance-data', 'db.internal']) {
      expect(urlRefusal(`https://${host}/computeMetadata/v1/`).message, host).toMatch(/is a cloud metadata or internal name; only public hosts/);
    }
  });

  it('[A2A-PUSH-07] loopback names are refused without resolving them; other names are not resolved at creation', () => {
    for (const host of ['localhost', 'LocalHost.', 'api.localhost']) expect(urlRefusal(`https://${host}/hook`).message, host).toMatch(/is a loopback name/);
    // A name that resolves nowhere (or anywhere) is judged at every delivery, not now.
    for (const host of ['example.com', 'no-such-host.invalid', 'localhost.example.com', 'internal.example.com']) expect(checkPushUrl(`https://${host}/hook`, strict).hostname).toBe(host);
  });

  it('[A2A-PUSH-07] IPv4 in other notations is normalized before it is judged', () => {
    for (const host of ['2130706433', '0x7f000001', '0177.0.0.1', '127.1', '10.1']) expect(urlRefusal(`https://${host}/`).code, host).toBe('A2A_PUSH_URL_REFUSED');
  });

  it('[A2A-PUSH-05] only https: http and every other scheme are refused', () => {
    expect(urlRefusal('http://example.com/hook').message).toBe('Push notification url refused: the scheme must be https, not http');
    expect(urlRefusal('ftp://example.com/hook').message).toBe('Push notification url refused: the scheme must be https, not ftp');
    expect(urlRefusal('wss://example.com/hook').message).toBe('Push notification url refused: the scheme must be https, not wss');
    expect(urlRefusal('file:///etc/passwd').message).toBe('Push notification url refused: the scheme must be https, not file');
    expect(urlRefusal('/relative/hook').message).toBe('Push notification url refused: it is not an absolute URL');
    expect(checkPushUrl('https://example.com:8443/hook?x=1', strict).port).toBe('8443');
  });

  it('[A2A-PUSH-06] a URL with userinfo is refused, user alone or user and password', () => {
    for (const url of ['https://user:secret@example.com/hook', 'https://user@example.com/hook', 'https://:secret@example.com/hook', 'http://user:pw@127.0.0.1/hook']) {
      expect(urlRefusal(url).message, url).toBe('Push notification url refused: it carries userinfo (user:password@); send credentials in authentication instead');
      expect(urlRefusal(url, dev).code, url).toBe('A2A_PUSH_URL_REFUSED');
    }
  });

  it('a URL longer than 2048 characters is refused; 2048 is accepted', () => {
    const base = 'https://example.com/';
    const at = (n: number) => base + 'a'.repeat(n - base.length);
    expect(checkPushUrl(at(PUSH_LIMITS.urlChars), strict).hostname).toBe('example.com');
    expect(urlRefusal(at(PUSH_LIMITS.urlChars + 1)).message).toBe('Push notification url refused: it is 2049 characters long; the limit is 2048');
  });

  it('spaces and control characters are refused rather than silently stripped', () => {
    for (const url of [' https://example.com/', 'https://example.com/ ', 'https://exa\tmple.com/', 'https://example.com/\r\nX-Injected: 1', 'https://example.com/\u0000']) {
      expect(urlRefusal(url).message, JSON.stringify(url)).toBe('Push notification url refused: it holds a space or a control character');
    }
  });

  it('the loopback switch admits loopback receivers over http and https, and nothing else', () => {
    for (const url of ['http://127.0.0.1:9999/hook', 'https://127.0.0.1/hook', 'http://127.8.9.10/', 'http://localhost:8080/webhook', 'http://tck.localhost/', 'http://[::1]:3000/', 'http://[::ffff:127.0.0.1]/']) {
      expect(checkPushUrl(url, dev).href, url).toBe(new URL(url).href);
      expect(urlRefusal(url).code, url).toBe('A2A_PUSH_URL_REFUSED');
    }
    expect(urlRefusal('http://127.0.0.1:9999/hook').message).toMatch(/is a loopback address/);
    for (const [url, rule] of [
      ['http://example.com/hook', /scheme must be https, not http/],
      ['https://10.0.0.1/hook', /is a private address/],
      ['http://192.168.1.10/hook', /is a private address/],
      ['https://169.254.169.254/', /cloud metadata address/],
      ['https://metadata.google.internal/', /cloud metadata or internal name/],
      ['https://[fe80::1]/', /link-local/],
    ] as const) {
      expect(urlRefusal(url, dev).message, url).toMatch(rule);
    }
  });

  it('addressClass agrees with isForbiddenAddress on every address the tables name', () => {
    for (const a of [...BLOCKED.map(([h]) => h), ...METADATA, '8.8.8.8', '[2606:4700:4700::1111]', '::ffff:8.8.8.8', 'not-an-address']) {
      expect(addressClass(a) !== null, a).toBe(isForbiddenAddress(a));
    }
    expect(addressClass('not-an-address')).toBe('invalid');
  });
});

describe('push token and authentication rules', () => {
  const authRefusal = (token: string | undefined, auth?: { scheme: string; credentials?: string }) => refusal(() => checkPushSecrets(token, auth));

  it('[A2A-PUSH-03] bearer and basic, in any case, are kept lowercased with their credentials; an empty token is no token', () => {
    expect(checkPushSecrets('tok-1', { scheme: 'Bearer', credentials: 'abc.def' })).toEqual({ token: 'tok-1', authScheme: 'bearer', authCredentials: 'abc.def' });
    expect(checkPushSecrets(undefined, { scheme: 'BASIC', credentials: 'dXNlcjpwYXNz' })).toEqual({ token: null, authScheme: 'basic', authCredentials: 'dXNlcjpwYXNz' });
    expect(checkPushSecrets('', undefined)).toEqual({ token: null, authScheme: null, authCredentials: null });
  });

  it('[A2A-PUSH-04] any other scheme is refused, and so is a scheme without credentials', () => {
    for (const scheme of ['digest', 'Negotiate', 'apikey', '', 'bearer ']) {
      const r = authRefusal(undefined, { scheme, credentials: 'c' });
      expect(r, scheme).toMatchObject({ code: 'A2A_PUSH_AUTH_REFUSED', kind: 'invalid' });
      expect(r.message).toBe(`Push notification config refused: authentication scheme ${JSON.stringify(scheme)} is not supported; use bearer or basic`);
    }
    expect(authRefusal(undefined, { scheme: 'bearer' }).message).toBe('Push notification config refused: authentication scheme bearer needs credentials');
    expect(authRefusal(undefined, { scheme: 'basic', credentials: '' }).message).toBe('Push notification config refused: authentication scheme basic needs credentials');
  });

  it('CR or LF in the token or the credentials is refused, without repeating the secret', () => {
    for (const bad of ['a\r\nX-Evil: 1', 'a\nb', 'a\rb']) {
      const t = authRefusal(bad);
      expect(t.message).toBe('Push notification config refused: token holds a CR or LF');
      const c = authRefusal(undefined, { scheme: 'bearer', credentials: bad });
      expect(c.message).toBe('Push notification config refused: authentication.credentials holds a CR or LF');
      expect(c.message).not.toContain('Evil');
    }
  });

  it('token and credentials are printable ASCII of at most 4096 characters, as an HTTP header value must be', () => {
    for (const bad of ['tab\there', 'nul\u0000', 'é', ' lead', 'trail ']) {
      expect(authRefusal(bad).message, JSON.stringify(bad)).toBe('Push notification config refused: token must be printable ASCII without leading or trailing spaces (it is sent as an HTTP header value)');
    }
    expect(checkPushSecrets('x'.repeat(PUSH_LIMITS.secretChars), undefined).token).toHaveLength(4096);
    expect(authRefusal(undefined, { scheme: 'bearer', credentials: 'x'.repeat(PUSH_LIMITS.secretChars + 1) }).message).toBe(
      'Push notification config refused: authentication.credentials is 4097 characters long; the limit is 4096',
    );
    expect(checkPushSecrets('inner spaces ok', undefined).token).toBe('inner spaces ok');
  });
});
