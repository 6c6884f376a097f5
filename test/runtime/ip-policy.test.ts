import { describe, expect, it } from 'vitest';
import { isForbiddenAddress, isForbiddenName } from '../../runtime/core/egress/ip-policy.mjs';

describe('egress address policy', () => {
  it('refuses loopback, private, shared, link-local (metadata), multicast and reserved IPv4 ranges, at their edges', () => {
    for (const a of ['127.0.0.1', '10.0.0.1', '172.16.0.1', '172.31.255.255', '192.168.1.1', '100.64.0.1', '169.254.169.254', '0.0.0.0', '224.0.0.1', '240.0.0.1', '255.255.255.255']) {
      expect(isForbiddenAddress(a), a).toBe(true);
    }
    for (const a of ['8.8.8.8', '1.1.1.1', '172.15.255.255', '172.32.0.1', '100.63.255.255', '100.128.0.1', '169.253.255.255']) {
      expect(isForbiddenAddress(a), a).toBe(false);
    }
  });

  it('judges IPv4 carried in IPv6 by the IPv4 address, in every form, and refuses tunnels it cannot judge', () => {
    for (const a of [
      '::1',
      '::',
      'fd00:ec2::254',
      'fe80::1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '0:0:0:0:0:ffff:7f00:1',
      '::ffff:0:7f00:1',
      '::ffff:0:127.0.0.1',
      '::7f00:1',
      '::127.0.0.1',
      '[::ffff:a9fe:a9fe]',
      '2002:7f00:1::1',
      '2002:a9fe:a9fe::1',
      '64:ff9b::808:808',
      '64:ff9b:1::a9fe:a9fe',
      '2001:0:4136:e378:8000:63bf:80ff:fffe',
      'not-an-address',
      '1:2:3:4:5:6:7:8:9',
    ]) {
      expect(isForbiddenAddress(a), a).toBe(true);
    }
    for (const a of ['2606:4700:4700::1111', '::ffff:8.8.8.8', '::ffff:808:808', '2002:808:808::1', '2a00:1450:4001:80b::200e']) {
      expect(isForbiddenAddress(a), a).toBe(false);
    }
  });

  it('refuses names that mean this machine or a metadata service, whatever their case or trailing dot', () => {
    for (const n of ['localhost', 'LOCALHOST.', 'a.localhost', 'metadata.google.internal.', 'x.internal', 'metadata', 'instance-data']) expect(isForbiddenName(n), n).toBe(true);
    for (const n of ['example.com', 'localhost.example.com', 'internal.example.com']) expect(isForbiddenName(n), n).toBe(false);
  });
});
