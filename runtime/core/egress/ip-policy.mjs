// Addresses a plugin (or any outbound request the platform makes for a tenant) must never reach unless the operator
// enables private networking for development: loopback, private, shared, link-local (cloud metadata lives at
// 169.254.169.254 and fd00:ec2::254), multicast, reserved and unspecified ranges, and IPv4 embedded in IPv6.
import net from 'node:net';

/**
 * Every refused range with the class a refusal names, most specific first: the metadata addresses sit inside the
 * link-local, shared and private ranges and are named as what they are.
 */
const RANGES = [
  ['169.254.169.254', 32, 'metadata'],
  ['100.100.100.200', 32, 'metadata'],
  ['fd00:ec2::254', 128, 'metadata'],
  ['0.0.0.0', 8, 'unspecified'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'shared'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'reserved'],
  ['192.0.2.0', 24, 'reserved'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'reserved'],
  ['198.51.100.0', 24, 'reserved'],
  ['203.0.113.0', 24, 'reserved'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'],
  ['::', 128, 'unspecified'],
  ['::1', 128, 'loopback'],
  ['fc00::', 7, 'private'],
  ['fe80::', 10, 'link-local'],
  ['fec0::', 10, 'private'],
  ['ff00::', 8, 'multicast'],
  ['2001:db8::', 32, 'reserved'],
  ['64:ff9b::', 96, 'translator'],
  ['100::', 64, 'reserved'],
];

const lists = new Map();
for (const [addr, prefix, cls] of RANGES) {
  if (!lists.has(cls)) lists.set(cls, new net.BlockList());
  lists.get(cls).addSubnet(addr, prefix, net.isIP(addr) === 4 ? 'ipv4' : 'ipv6');
}

const METADATA_NAMES = new Set(['localhost', 'metadata', 'metadata.google.internal', 'metadata.goog', 'instance-data']);

/** The eight 16-bit groups of an IPv6 address (a dotted IPv4 tail becomes the last two), or null if malformed. */
function groups6(a) {
  let text = a;
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [b0, b1, b2, b3] = dotted.slice(1).map(Number);
    text = `${text.slice(0, dotted.index)}${((b0 << 8) | b1).toString(16)}:${((b2 << 8) | b3).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, null];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const fill = tail === null ? 0 : 8 - h.length - t.length;
  if (fill < 0) return null;
  const all = [...h, ...Array(fill).fill('0'), ...t].map((g) => parseInt(g, 16));
  return all.length === 8 && all.every((g) => g >= 0 && g <= 0xffff) ? all : null;
}

const v4 = (hi, lo) => [hi >> 8, hi & 255, lo >> 8, lo & 255].join('.');

/** The first class whose ranges hold the address, or null. */
function classOf(address, family) {
  for (const [cls, list] of lists) if (list.check(address, family)) return cls;
  return null;
}

/**
 * Why an address literal may not be reached: `metadata`, `loopback`, `private`, `link-local`, `shared`,
 * `unspecified`, `multicast`, `reserved`, `translator` (a tunnel or translator whose far end cannot be judged here)
 * or `invalid` (not an address); null for a public address. IPv4 carried inside IPv6 is judged by the IPv4 address.
 * @param {string} address
 * @returns {string | null}
 */
export function addressClass(address) {
  const a = address.replace(/^\[|\]$/g, '').toLowerCase();
  const kind = net.isIP(a);
  if (kind === 4) return classOf(a, 'ipv4');
  if (kind !== 6) return 'invalid';
  const g = groups6(a.replace(/%.*$/, ''));
  if (!g) return 'invalid';
  // IPv4 carried inside IPv6: compatible (::a.b.c.d), mapped (::ffff:a.b.c.d), SIIT (::ffff:0:a.b.c.d) and 6to4
  // (2002:aabb:ccdd::).
  const zeros = (n) => g.slice(0, n).every((x) => x === 0);
  if (zeros(7) && g[7] <= 1) return g[7] === 1 ? 'loopback' : 'unspecified';
  if (zeros(5) && (g[5] === 0 || g[5] === 0xffff)) return classOf(v4(g[6], g[7]), 'ipv4');
  if (zeros(4) && g[4] === 0xffff && g[5] === 0) return classOf(v4(g[6], g[7]), 'ipv4');
  if (g[0] === 0x2002) return classOf(v4(g[1], g[2]), 'ipv4');
  // Translators and tunnels whose far end cannot be judged here: NAT64 (well-known and local-use) and Teredo.
  if (g[0] === 0x64 && g[1] === 0xff9b) return 'translator';
  if (g[0] === 0x2001 && g[1] === 0) return 'translator';
  return classOf(a, 'ipv6');
}

/** @param {string} address */
export function isForbiddenAddress(address) {
  return addressClass(address) !== null;
}

/** @param {string} host */
export function isForbiddenName(host) {
  const h = host.toLowerCase().replace(/\.$/, '');
  return METADATA_NAMES.has(h) || h.endsWith('.localhost') || h.endsWith('.internal');
}
