import { randomUUID } from 'node:crypto';
import type { Store } from '../../store/index.ts';
import { randomSecret, sameHash, sha256 } from './secrets.ts';

/**
 * Key format: `ak-` + the key id (32 hex digits, the UUID without dashes) + `_` + a 256-bit secret (base64url).
 * The id lets the platform find the key and check its expiry and revocation before it looks at the secret.
 */
const KEY_RE = /^ak-([0-9a-f]{32})_([A-Za-z0-9_-]{43})$/;

export interface IssuedKey {
  id: string;
  key: string;
  expiresAt: string | null;
}

export type KeyCheck =
  | { ok: true; keyId: string; accountId: string; principalId: string; expiresAt: string | null }
  | { ok: false; reason: 'malformed' | 'invalid' | 'expired' | 'revoked' };

const toUuid = (hex: string) => `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;

export async function issueApiKey(
  store: Pick<Store, 'apiKeys'>,
  k: { accountId: string; principalId: string; expiresAt: string | null; name?: string | null },
): Promise<IssuedKey> {
  const id = randomUUID();
  const secret = randomSecret(32);
  await store.apiKeys.create({ id, accountId: k.accountId, principalId: k.principalId, name: k.name ?? null, secretHash: sha256(secret), expiresAt: k.expiresAt });
  return { id, key: `ak-${id.replaceAll('-', '')}_${secret}`, expiresAt: k.expiresAt };
}

export async function checkApiKey(store: Pick<Store, 'apiKeys'>, presented: string, now: number): Promise<KeyCheck> {
  const m = KEY_RE.exec(presented);
  if (!m) return { ok: false, reason: 'malformed' };
  const record = await store.apiKeys.get(toUuid(m[1]!));
  if (!record) return { ok: false, reason: 'invalid' };
  // Revocation and expiry come before the secret: a cut-off key fails at once, whatever secret it carries.
  if (record.revokedAt !== null && Date.parse(record.revokedAt) <= now) return { ok: false, reason: 'revoked' };
  if (record.expiresAt !== null && Date.parse(record.expiresAt) <= now) return { ok: false, reason: 'expired' };
  if (!sameHash(sha256(m[2]!), record.secretHash)) return { ok: false, reason: 'invalid' };
  return { ok: true, keyId: record.id, accountId: record.accountId, principalId: record.principalId, expiresAt: record.expiresAt };
}
