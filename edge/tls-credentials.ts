import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createSecureContext } from 'node:tls';
import { ConfigError } from '../runtime/index.ts';

/** The certificate chain and key the node's HTTPS listener serves, read once at start. */
export interface TlsCredentials {
  cert: string;
  key: string;
  /** The served (first) certificate's names and end of validity, for the start-up log. */
  subjectAltName: string;
  validTo: Date;
}

const CERT_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** A file's text, or a problem naming the setting and what is wrong with the path (never a stack trace). */
function readSetting(setting: string, file: string, problems: string[]): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' || code === 'EPERM' ? 'the node may not read it (permission denied)' : code === 'EISDIR' ? 'it is a directory, not a PEM file' : `cannot be read (${code ?? (err as Error).message})`;
    problems.push(`${setting}=${JSON.stringify(file)}: ${why}`);
    return null;
  }
}

function parseChain(file: string, text: string, problems: string[]): X509Certificate | null {
  const blocks = text.match(CERT_BLOCK) ?? [];
  if (blocks.length === 0) {
    problems.push(`PLATFORM_TLS_CERT=${JSON.stringify(file)}: not a PEM certificate (no -----BEGIN CERTIFICATE----- block)`);
    return null;
  }
  try {
    const chain = blocks.map((b) => new X509Certificate(b));
    return chain[0]!;
  } catch {
    problems.push(`PLATFORM_TLS_CERT=${JSON.stringify(file)}: a -----BEGIN CERTIFICATE----- block in it is not a valid certificate`);
    return null;
  }
}

function parseKey(file: string, text: string, problems: string[]): KeyObject | null {
  if (!/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(text)) {
    problems.push(`PLATFORM_TLS_KEY=${JSON.stringify(file)}: not a PEM private key (no -----BEGIN ... PRIVATE KEY----- block)`);
    return null;
  }
  try {
    return createPrivateKey(text);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    problems.push(
      code === 'ERR_MISSING_PASSPHRASE' || /ENCRYPTED/.test(text)
        ? `PLATFORM_TLS_KEY=${JSON.stringify(file)}: the key is encrypted; the node needs it without a passphrase (e.g. openssl pkey -in KEY -out PLAIN-KEY)`
        : `PLATFORM_TLS_KEY=${JSON.stringify(file)}: the private key in it cannot be read (${(err as Error).message})`,
    );
    return null;
  }
}

/**
 * Reads and checks the certificate and key files of PLATFORM_TLS_CERT and PLATFORM_TLS_KEY before the port is bound:
 * a missing or unreadable file, a file that is not PEM, a key that is not the certificate's, or an expired
 * certificate stops the start with a ConfigError naming the setting, as any other bad setting does. (Left to the
 * TLS layer, the same mistakes surface as an OpenSSL stack trace, or worse, as handshakes that fail at every client.)
 */
export function readTlsCredentials(files: { certFile: string; keyFile: string }, now = new Date()): TlsCredentials {
  const problems: string[] = [];
  const certText = readSetting('PLATFORM_TLS_CERT', files.certFile, problems);
  const keyText = readSetting('PLATFORM_TLS_KEY', files.keyFile, problems);
  const leaf = certText === null ? null : parseChain(files.certFile, certText, problems);
  const key = keyText === null ? null : parseKey(files.keyFile, keyText, problems);
  if (leaf && key && !leaf.checkPrivateKey(key)) {
    problems.push(`PLATFORM_TLS_KEY=${JSON.stringify(files.keyFile)}: not the private key of the certificate in PLATFORM_TLS_CERT=${JSON.stringify(files.certFile)}`);
  }
  if (leaf && new Date(leaf.validTo) < now) {
    problems.push(`PLATFORM_TLS_CERT=${JSON.stringify(files.certFile)}: the certificate expired on ${new Date(leaf.validTo).toISOString()} and every client would refuse it (a local one: run platform dev-cert again)`);
  }
  if (problems.length === 0) {
    // Whatever else OpenSSL will not serve (a key type it refuses, a chain it cannot load) is found now too.
    try {
      createSecureContext({ cert: certText!, key: keyText! });
    } catch (err) {
      problems.push(`PLATFORM_TLS_CERT=${JSON.stringify(files.certFile)}, PLATFORM_TLS_KEY=${JSON.stringify(files.keyFile)}: OpenSSL refuses them (${(err as Error).message})`);
    }
  }
  if (problems.length) throw new ConfigError(problems);
  return { cert: certText!, key: keyText!, subjectAltName: leaf!.subjectAltName ?? '', validTo: new Date(leaf!.validTo) };
}
