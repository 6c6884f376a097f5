import path from 'node:path';
import { parseArgs } from 'node:util';
// The config module alone, not the runtime's index: this command needs no more, and starts in a fraction of the time.
import { loadConfig, urls } from '../../runtime/core/config/index.ts';
import { UsageError } from './output.ts';

const usage = () => `usage: platform dev-cert [--dir <dir>] [--handle <handle>]... [--json]
Makes a local certificate authority (once; later runs keep it) and a certificate it signs for localhost and the
hosts of PLATFORM_DOMAIN (renewed on every run), for PLATFORM_TLS_CERT and PLATFORM_TLS_KEY.
  --dir DIR      where the files go (default: $PLATFORM_DATA_DIR/tls)
  --handle H     name mcp-H and agent-H explicitly (default: demo); needed with a one-label domain such as
                 localhost, whose wildcard TLS clients refuse; repeat it for more handles`;

/** A handle the host router would route: one DNS label once `agent-` is put before it. */
const HANDLE = /^(?=.{1,57}$)[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/;

/**
 * The names the certificate carries. `*.localhost` is there for the clients that take it, but Node (so mcp-remote),
 * curl and OpenSSL refuse a wildcard over a one-label name: under such a domain every host is named explicitly, the
 * handles' included. Under a domain of two labels or more (`platform.localhost`) one wildcard covers every handle.
 * The loopback addresses are there for local tools that call the node by address (`node.json`'s URL).
 */
export function certificateNames(domain: string, handles: string[]): { dns: string[]; ips: string[]; wildcardCoversHandles: boolean } {
  const wildcardCoversHandles = domain.includes('.');
  const dns = ['localhost', '*.localhost', domain, `*.${domain}`];
  if (!wildcardCoversHandles) dns.push(`api.${domain}`, ...handles.flatMap((h) => [`mcp-${h}.${domain}`, `agent-${h}.${domain}`]));
  return { dns: [...new Set(dns)], ips: ['127.0.0.1', '::1'], wildcardCoversHandles };
}

/** A path as a POSIX shell reads it back. */
const sh = (s: string) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replaceAll("'", `'\\''`)}'`);

/** How to trust the CA: Node clients (mcp-remote, this CLI) read only NODE_EXTRA_CA_CERTS, not the system's store. */
function trustCommands(caFile: string) {
  return {
    node: `export NODE_EXTRA_CA_CERTS=${sh(caFile)}`,
    debian: `sudo cp ${sh(caFile)} /usr/local/share/ca-certificates/platform-dev-ca.crt && sudo update-ca-certificates`,
    macos: `sudo security add-trusted-cert -d -r trustRoot -k /Library/Keychains/System.keychain ${sh(caFile)}`,
  };
}

/**
 * `platform dev-cert`: what a node needs to serve HTTPS on a developer's machine, so that OAuth clients which insist
 * on https (mcp-remote refuses plain http except on literal `localhost`) can sign in to a local gateway. Re-running
 * it keeps the CA, so whatever trusts it goes on trusting the renewed certificate.
 */
export async function devCertCli(args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args,
    options: { dir: { type: 'string' }, handle: { type: 'string', multiple: true }, json: { type: 'boolean' } },
    allowPositionals: true,
    strict: true,
  });
  if (positionals.length) throw new UsageError(`platform dev-cert takes no arguments (${positionals.join(' ')})\n${usage()}`);
  if (values.dir === '') throw new UsageError(`--dir needs a directory\n${usage()}`);
  const handles = values.handle ?? ['demo'];
  for (const h of handles) {
    if (!HANDLE.test(h)) throw new UsageError(`--handle ${JSON.stringify(h)}: a handle is 1-57 lowercase letters, digits and -, starting and ending with a letter or digit\n${usage()}`);
  }
  const config = loadConfig();
  const dir = values.dir ? path.resolve(values.dir) : path.join(config.dataDir, 'tls');
  const names = certificateNames(config.domain, handles);

  // The certificate library loads here, not with this module: the usage text (`platform help`) imports this file.
  const { CA_FILES, issueLeaf, LEAF_FILES, loadOrCreateCa } = await import('./dev-ca.ts');
  const ca = await loadOrCreateCa(dir);
  const leaf = await issueLeaf(dir, ca, names);

  const files = { caCert: path.join(dir, CA_FILES.cert), caKey: path.join(dir, CA_FILES.key), cert: path.join(dir, LEAF_FILES.cert), key: path.join(dir, LEAF_FILES.key) };
  const u = urls({ domain: config.domain, publicScheme: 'https', publicPort: config.publicPort });
  const trust = trustCommands(files.caCert);
  const notes = [
    ca.created ? 'A new CA: trust it once, as below.' : 'The CA of an earlier run was kept: wherever you trusted it, it stays trusted.',
    'A running node reads its certificate at start: restart it to serve this one.',
    ...(names.wildcardCoversHandles
      ? []
      : [
          `TLS clients (Node, so mcp-remote; curl) refuse the wildcard *.${config.domain}: this certificate names the hosts of ${handles.join(', ')} only. ` +
            `Add handles with --handle and restart the node, or set PLATFORM_DOMAIN=platform.${config.domain}, whose wildcard covers every handle, and run platform dev-cert again.`,
        ]),
    `Keep ${files.caKey} private: with it anyone can make certificates your machine trusts, for any name.`,
  ];

  if (values.json) {
    process.stdout.write(
      `${JSON.stringify(
        {
          dir,
          ca: { cert: files.caCert, key: files.caKey, created: ca.created, expires_at: ca.notAfter.toISOString() },
          certificate: { cert: files.cert, key: files.key, names: [...leaf.dns, ...leaf.ips], expires_at: leaf.notAfter.toISOString() },
          settings: { PLATFORM_TLS_CERT: files.cert, PLATFORM_TLS_KEY: files.key },
          urls: { api: u.api, mcp: u.mcp('{handle}'), agent: u.agent('{handle}') },
          trust,
          notes,
        },
        null,
        2,
      )}\n`,
    );
    return;
  }
  const lines = [
    `${ca.created ? 'Created' : 'Kept'} the local certificate authority`,
    `  certificate  ${files.caCert}`,
    `  key          ${files.caKey}  (mode 0600)`,
    `  valid until  ${ca.notAfter.toISOString()}`,
    '',
    `Issued a certificate for ${[...leaf.dns, ...leaf.ips].join(', ')}`,
    `  certificate  ${files.cert}`,
    `  key          ${files.key}  (mode 0600)`,
    `  valid until  ${leaf.notAfter.toISOString()}`,
    '',
    'Serve HTTPS with:',
    `  export PLATFORM_TLS_CERT=${sh(files.cert)}`,
    `  export PLATFORM_TLS_KEY=${sh(files.key)}`,
    '  platform serve',
    `Then the management API is ${u.api}, the MCP gateways ${u.mcp('{handle}')}, the agent gateways ${u.agent('{handle}')}.`,
    '',
    'Trust the CA:',
    `  Node clients (mcp-remote, this CLI)  ${trust.node}`,
    `  Debian, Ubuntu                       ${trust.debian}`,
    `  macOS                                ${trust.macos}`,
    '  Firefox keeps its own store: Settings > Privacy & Security > Certificates > View Certificates > Authorities > Import.',
    '',
    ...notes,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}
