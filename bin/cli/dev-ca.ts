// @peculiar/x509's dependency injection (tsyringe) needs the Reflect metadata API before it loads.
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { createPrivateKey, randomBytes, webcrypto, X509Certificate } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CommandError } from './output.ts';

type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;

/**
 * The local certificate authority of `platform dev-cert` and the server certificates it signs. node:crypto reads
 * X.509 but cannot issue it; @peculiar/x509 builds the certificates and WebCrypto (Node's OpenSSL) makes the keys and
 * signatures, so nothing here is hand-rolled cryptography. Keys are ECDSA P-256, which every TLS client takes.
 */
x509.cryptoProvider.set(webcrypto);

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY = 86_400_000;
/** Long enough never to be re-trusted in practice; a lost trust is the expensive part of a local CA. */
const CA_DAYS = 10 * 365;
/** Under the 398 days Apple and browsers accept for a server certificate; a re-run renews it. */
const LEAF_DAYS = 397;

export const CA_FILES = { cert: 'ca.pem', key: 'ca-key.pem' } as const;
export const LEAF_FILES = { cert: 'cert.pem', key: 'key.pem' } as const;

export interface LocalCa {
  certPem: string;
  cert: x509.X509Certificate;
  key: CryptoKey;
  created: boolean;
  notAfter: Date;
}

export interface Leaf {
  dns: string[];
  ips: string[];
  notAfter: Date;
}

/** A positive serial of 128 random bits (RFC 5280 §4.1.2.2: unique per CA, at most 20 octets). */
const serial = () => {
  const b = randomBytes(16);
  b[0] = b[0]! & 0x7f;
  return b.toString('hex');
};

/** Written beside the target and renamed over it: a reader never sees half a file, and the mode is always `mode`. */
function writeAtomic(file: string, text: string, mode: number) {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, text, { mode });
  renameSync(tmp, file);
}

const pkcs8Pem = async (key: CryptoKey) => x509.PemConverter.encode(await webcrypto.subtle.exportKey('pkcs8', key), 'PRIVATE KEY');

/** Who made this CA, in its name: a trust store full of development CAs says whose each is. */
function caName(): string {
  let user = 'user';
  try {
    user = os.userInfo().username;
  } catch {
    // No passwd entry (some containers): the host name alone still tells CAs apart.
  }
  const clean = (s: string) => s.replace(/[^A-Za-z0-9._-]/g, '') || 'unknown';
  return `CN=Platform development CA (${clean(user)}@${clean(os.hostname())}), O=agent-platform development`;
}

async function createCa(dir: string): Promise<LocalCa> {
  const keys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as CryptoKeyPair;
  const notBefore = new Date(Date.now() - DAY);
  const notAfter = new Date(notBefore.getTime() + CA_DAYS * DAY);
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: caName(),
    notBefore,
    notAfter,
    signingAlgorithm: ALG,
    keys,
    extensions: [
      // It signs server certificates only, never another CA.
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  const certPem = cert.toString('pem');
  // The key first: a CA certificate without its key would make the next run stop.
  writeAtomic(path.join(dir, CA_FILES.key), await pkcs8Pem(keys.privateKey), 0o600);
  writeAtomic(path.join(dir, CA_FILES.cert), `${certPem}\n`, 0o644);
  return { certPem, cert, key: keys.privateKey, created: true, notAfter };
}

/** The CA of an earlier run, checked: both files, a key that is the certificate's, not expired. */
async function readCa(dir: string): Promise<LocalCa> {
  const certFile = path.join(dir, CA_FILES.cert);
  const keyFile = path.join(dir, CA_FILES.key);
  const remake = `remove ${certFile} and ${keyFile} to make a new CA (then trust the new one again)`;
  let certPem: string;
  let key: CryptoKey;
  try {
    certPem = readFileSync(certFile, 'utf8');
    const keyObject = createPrivateKey(readFileSync(keyFile, 'utf8'));
    if (!new X509Certificate(certPem).checkPrivateKey(keyObject)) throw new Error('the key is not the certificate\'s');
    const der = keyObject.export({ type: 'pkcs8', format: 'der' });
    key = await webcrypto.subtle.importKey('pkcs8', der, { name: ALG.name, namedCurve: ALG.namedCurve }, false, ['sign']);
  } catch (err) {
    throw new CommandError('DEV_CERT_BAD_CA', `the local CA in ${dir} cannot be used (${(err as Error).message}): ${remake}`);
  }
  const cert = new x509.X509Certificate(certPem);
  if (cert.notAfter.getTime() <= Date.now()) throw new CommandError('DEV_CERT_CA_EXPIRED', `the local CA in ${dir} expired on ${cert.notAfter.toISOString()}: ${remake}`);
  return { certPem: certPem.trim(), cert, key, created: false, notAfter: cert.notAfter };
}

/** The directory's CA: the one an earlier run made (so the trust given to it stays good), else a new one. */
export async function loadOrCreateCa(dir: string): Promise<LocalCa> {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const hasCert = existsSync(path.join(dir, CA_FILES.cert));
  const hasKey = existsSync(path.join(dir, CA_FILES.key));
  if (hasCert && hasKey) return readCa(dir);
  if (hasCert || hasKey) {
    const [have, missing] = hasCert ? [CA_FILES.cert, CA_FILES.key] : [CA_FILES.key, CA_FILES.cert];
    throw new CommandError('DEV_CERT_BAD_CA', `${path.join(dir, have)} exists without ${path.join(dir, missing)}: restore it, or remove ${have} to make a new CA (then trust the new one again)`);
  }
  return createCa(dir);
}

/** A new key and a server certificate for the names, signed by the CA; replaces the directory's previous one. */
export async function issueLeaf(dir: string, ca: LocalCa, names: { dns: string[]; ips: string[] }): Promise<Leaf> {
  const keys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as CryptoKeyPair;
  const notBefore = new Date(Date.now() - DAY);
  // Never past the CA's own end: clients would refuse the chain from then on anyway.
  const notAfter = new Date(Math.min(notBefore.getTime() + LEAF_DAYS * DAY, ca.notAfter.getTime()));
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: `CN=${names.dns[0] ?? 'localhost'}, O=agent-platform development`,
    issuer: ca.cert.subject,
    notBefore,
    notAfter,
    signingAlgorithm: ALG,
    publicKey: keys.publicKey,
    signingKey: ca.key,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      // Clients match names against these only (the subject's CN is ignored since RFC 6125).
      new x509.SubjectAlternativeNameExtension([...names.dns.map((value) => ({ type: 'dns' as const, value })), ...names.ips.map((value) => ({ type: 'ip' as const, value }))]),
      await x509.AuthorityKeyIdentifierExtension.create(ca.cert, false),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  writeAtomic(path.join(dir, LEAF_FILES.key), await pkcs8Pem(keys.privateKey), 0o600);
  // The server's certificate alone: clients hold the CA as their trust anchor, a served copy of it would add nothing.
  writeAtomic(path.join(dir, LEAF_FILES.cert), `${cert.toString('pem')}\n`, 0o644);
  return { dns: names.dns, ips: names.ips, notAfter };
}
