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

/** @param {string} address */
export function isForbiddenAddress(address) {
  const a = address.replace(/^\[|\]$/g, '').toLowerCase();
  const kind = net.isIP(a);
  if (kind === 4) return blocked.check(a, 'ipv4');
  if (kind !== 6) return true;
  // IPv4-mapped and IPv4-compatible forms are judged by the IPv4 address they carry.
  const mapped = /^(?:0{0,4}:){0,5}(?:ffff:)?(\d+\.\d+\.\d+\.\d+)$/.exec(a.replace(/^::/, ''));
  if (mapped) return blocked.check(mapped[1], 'ipv4');
  if (a.startsWith('::ffff:')) {
    const hex = a.slice(7).split(':');
    if (hex.length === 2) {
      const n = (parseInt(hex[0], 16) << 16) | parseInt(hex[1], 16);
      return blocked.check([n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.'), 'ipv4');
    }
  }
  return blocked.check(a, 'ipv6');
}

/** @param {string} host */
export function isForbiddenName(host) {
  const h = host.toLowerCase().replace(/\.$/, '');
  return METADATA_NAMES.has(h) || h.endsWith('.localhost') || h.endsWith('.internal');
}
