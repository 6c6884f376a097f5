// Addresses a plugin (or any outbound request the platform makes for a tenant) must never reach unless the operator
// enables private networking for development: loopback, private, shared, link-local (cloud metadata lives at
// 169.254.169.254 and fd00:ec2::254), multicast, reserved and unspecified ranges, and IPv4 embedded in IPv6.
import net from 'node:net';

const blocked = new net.BlockList();
for (const [addr, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
]) {
  blocked.addSubnet(addr, prefix, 'ipv4');
}
for (const [addr, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
  ['2001:db8::', 32],
  ['64:ff9b::', 96],
  ['100::', 64],
]) {
  blocked.addSubnet(addr, prefix, 'ipv6');
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

/** @param {string} address */
export function isForbiddenAddress(address) {
  const a = address.replace(/^\[|\]$/g, '').toLowerCase();
  const kind = net.isIP(a);
  if (kind === 4) return blocked.check(a, 'ipv4');
  if (kind !== 6) return true;
  const g = groups6(a.replace(/%.*$/, ''));
  if (!g) return true;
  // IPv4 carried inside IPv6 is judged by the IPv4 address: compatible (::a.b.c.d), mapped (::ffff:a.b.c.d), SIIT
  // (::ffff:0:a.b.c.d) and 6to4 (2002:aabb:ccdd::).
  const zeros = (n) => g.slice(0, n).every((x) => x === 0);
  if (zeros(5) && (g[5] === 0 || g[5] === 0xffff)) return blocked.check(v4(g[6], g[7]), 'ipv4');
  if (zeros(4) && g[4] === 0xffff && g[5] === 0) return blocked.check(v4(g[6], g[7]), 'ipv4');
  if (g[0] === 0x2002) return blocked.check(v4(g[1], g[2]), 'ipv4');
  // Translators and tunnels whose far end cannot be judged here: NAT64 (well-known and local-use) and Teredo.
  if (g[0] === 0x64 && g[1] === 0xff9b) return true;
  if (g[0] === 0x2001 && g[1] === 0) return true;
  return blocked.check(a, 'ipv6');
}

/** @param {string} host */
export function isForbiddenName(host) {
  const h = host.toLowerCase().replace(/\.$/, '');
  return METADATA_NAMES.has(h) || h.endsWith('.localhost') || h.endsWith('.internal');
}
