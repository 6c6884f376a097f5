import { createPrivateKey, X509Certificate } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { checkServerIdentity } from 'node:tls';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'platform-dev-cert-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const read = (f: string) => new X509Certificate(readFileSync(f));
const mode = (f: string) => statSync(f).mode & 0o777;
/** How a Node TLS client (mcp-remote is one) judges a host against the certificate. */
const nodeAccepts = (host: string, cert: X509Certificate) => checkServerIdentity(host, { subject: {}, subjectaltname: cert.subjectAltName } as never) === undefined;

describe('platform dev-cert', () => {
  const dir = path.join(tmp, 'certs');

  it('makes a CA and a certificate it signed for localhost and the hosts of the default domain, keys 0600', async () => {
    const res = await runCli(['dev-cert', '--dir', dir, '--json'], { PORT: '8443' });
    expect(res.code).toBe(0);
    expect(res.json).toMatchObject({
      dir,
      ca: { cert: path.join(dir, 'ca.pem'), key: path.join(dir, 'ca-key.pem'), created: true },
      certificate: { cert: path.join(dir, 'cert.pem'), key: path.join(dir, 'key.pem') },
      settings: { PLATFORM_TLS_CERT: path.join(dir, 'cert.pem'), PLATFORM_TLS_KEY: path.join(dir, 'key.pem') },
      urls: { api: 'https://api.localhost:8443', mcp: 'https://mcp-{handle}.localhost:8443', agent: 'https://agent-{handle}.localhost:8443' },
      trust: {
        node: `export NODE_EXTRA_CA_CERTS=${path.join(dir, 'ca.pem')}`,
        debian: expect.stringContaining('update-ca-certificates'),
        macos: expect.stringContaining(`security add-trusted-cert -d -r trustRoot -k /Library/Keychains/System.keychain ${path.join(dir, 'ca.pem')}`),
      },
    });
    expect(res.json.certificate.names).toEqual(['localhost', '*.localhost', 'api.localhost', 'mcp-demo.localhost', 'agent-demo.localhost', '127.0.0.1', '::1']);
    expect(mode(path.join(dir, 'ca-key.pem'))).toBe(0o600);
    expect(mode(path.join(dir, 'key.pem'))).toBe(0o600);
    expect(mode(dir)).toBe(0o700);

    const ca = read(path.join(dir, 'ca.pem'));
    const leaf = read(path.join(dir, 'cert.pem'));
    expect(ca.ca).toBe(true);
    expect(leaf.ca).toBe(false);
    expect(leaf.checkIssued(ca)).toBe(true);
    expect(leaf.verify(ca.publicKey)).toBe(true);
    expect(ca.checkPrivateKey(createPrivateKey(readFileSync(path.join(dir, 'ca-key.pem'))))).toBe(true);
    expect(leaf.checkPrivateKey(createPrivateKey(readFileSync(path.join(dir, 'key.pem'))))).toBe(true);
    expect(leaf.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1']);
    for (const host of ['localhost', 'api.localhost', 'mcp-demo.localhost', 'agent-demo.localhost']) {
      expect(leaf.checkHost(host)).toBe(host);
      expect(nodeAccepts(host, leaf)).toBe(true);
    }
    expect(leaf.checkIP('127.0.0.1')).toBe('127.0.0.1');
    // `*.localhost` is no wildcard Node takes: a handle not named is refused, which the notes say.
    expect(nodeAccepts('mcp-other.localhost', leaf)).toBe(false);
    expect(res.json.notes.join('\n')).toContain('refuse the wildcard *.localhost');
  });

  it('a second run keeps the CA, byte for byte, and renews the certificate, with more handles named', async () => {
    const caBefore = readFileSync(path.join(dir, 'ca.pem'), 'utf8');
    const caKeyBefore = readFileSync(path.join(dir, 'ca-key.pem'), 'utf8');
    const leafBefore = read(path.join(dir, 'cert.pem'));
    const res = await runCli(['dev-cert', '--dir', dir, '--handle', 'demo', '--handle', 'acme-tools', '--json'], {});
    expect(res.code).toBe(0);
    expect(res.json.ca.created).toBe(false);
    expect(readFileSync(path.join(dir, 'ca.pem'), 'utf8')).toBe(caBefore);
    expect(readFileSync(path.join(dir, 'ca-key.pem'), 'utf8')).toBe(caKeyBefore);
    const leaf = read(path.join(dir, 'cert.pem'));
    expect(leaf.serialNumber).not.toBe(leafBefore.serialNumber);
    expect(leaf.publicKey.export({ type: 'spki', format: 'pem' })).not.toBe(leafBefore.publicKey.export({ type: 'spki', format: 'pem' }));
    expect(leaf.verify(read(path.join(dir, 'ca.pem')).publicKey)).toBe(true);
    expect(nodeAccepts('mcp-acme-tools.localhost', leaf)).toBe(true);
    expect(nodeAccepts('agent-acme-tools.localhost', leaf)).toBe(true);
  });

  it('under a domain of two labels one wildcard covers every handle; the default directory is in the data directory', async () => {
    const dataDir = path.join(tmp, 'data');
    const res = await runCli(['dev-cert', '--json'], { PLATFORM_DATA_DIR: dataDir, PLATFORM_DOMAIN: 'platform.localhost' });
    expect(res.code).toBe(0);
    expect(res.json.dir).toBe(path.join(dataDir, 'tls'));
    expect(res.json.certificate.names).toEqual(['localhost', '*.localhost', 'platform.localhost', '*.platform.localhost', '127.0.0.1', '::1']);
    const leaf = read(path.join(dataDir, 'tls', 'cert.pem'));
    for (const host of ['api.platform.localhost', 'mcp-anything.platform.localhost', 'agent-anything.platform.localhost', 'platform.localhost']) expect(nodeAccepts(host, leaf)).toBe(true);
    expect(res.json.notes.join('\n')).not.toContain('wildcard');
  });

  it('prints the paths, the settings and how to trust the CA', async () => {
    const res = await runCli(['dev-cert', '--dir', dir], {});
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('Kept the local certificate authority');
    expect(res.stdout).toContain(`export PLATFORM_TLS_CERT=${path.join(dir, 'cert.pem')}`);
    expect(res.stdout).toContain(`export PLATFORM_TLS_KEY=${path.join(dir, 'key.pem')}`);
    expect(res.stdout).toContain(`export NODE_EXTRA_CA_CERTS=${path.join(dir, 'ca.pem')}`);
    expect(res.stdout).toContain(`sudo cp ${path.join(dir, 'ca.pem')} /usr/local/share/ca-certificates/platform-dev-ca.crt && sudo update-ca-certificates`);
    expect(res.stdout).toContain('security add-trusted-cert');
  });

  it('mistakes: a bad handle or an argument is a usage error, a CA without its key stops with no stack trace', async () => {
    const badHandle = await runCli(['dev-cert', '--dir', dir, '--handle', 'Not_A_Label'], {});
    expect(badHandle.code).toBe(2);
    expect(badHandle.stderr).toContain('--handle "Not_A_Label": a handle is 1-57 lowercase letters, digits and -');
    expect((await runCli(['dev-cert', 'extra'], {})).code).toBe(2);
    expect((await runCli(['dev-cert', '--bogus'], {})).code).toBe(2);

    const lone = path.join(tmp, 'lone');
    expect((await runCli(['dev-cert', '--dir', lone], {})).code).toBe(0);
    rmSync(path.join(lone, 'ca-key.pem'));
    const res = await runCli(['dev-cert', '--dir', lone, '--json'], {});
    expect(res.code).toBe(1);
    expect(res.json).toEqual({ error: { code: 'DEV_CERT_BAD_CA', message: `${path.join(lone, 'ca.pem')} exists without ${path.join(lone, 'ca-key.pem')}: restore it, or remove ca.pem to make a new CA (then trust the new one again)` } });
    expect(res.stderr).not.toMatch(/\n\s+at /);
    // Nothing was replaced: the certificate of the earlier run is still there.
    expect(existsSync(path.join(lone, 'cert.pem'))).toBe(true);
  });
});
