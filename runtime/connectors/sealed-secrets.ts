import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/**
 * Connector credentials at rest: AES-256-GCM under a key derived (HKDF-SHA256) from the platform's secret for this
 * purpose only, so the key that signs tokens never encrypts, and a database dump alone reveals no credential.
 * Layout: 12-byte IV, 16-byte tag, ciphertext of the JSON.
 */
export function sealer(platformSecret: string) {
  const key = Buffer.from(hkdfSync('sha256', platformSecret, 'agent-platform', 'connector-secrets/v1', 32));
  return {
    seal(value: unknown): Buffer {
      const iv = randomBytes(12);
      const c = createCipheriv('aes-256-gcm', key, iv);
      const body = Buffer.concat([c.update(JSON.stringify(value), 'utf8'), c.final()]);
      return Buffer.concat([iv, c.getAuthTag(), body]);
    },
    open<T>(sealed: Buffer): T {
      const d = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, 12));
      d.setAuthTag(sealed.subarray(12, 28));
      return JSON.parse(Buffer.concat([d.update(sealed.subarray(28)), d.final()]).toString('utf8')) as T;
    },
  };
}

export type Sealer = ReturnType<typeof sealer>;
