import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

/** What a presigned file URL names, once its signature checks out. */
export interface FileLinkClaims {
  accountId: string;
  fileId: string;
  /** Unix seconds after which the link is refused. */
  expires: number;
}

export interface FileLink {
  url: string;
  expiresAt: string;
}

/** Bounds of a lifetime a caller may ask for, in seconds. */
export const FILE_LINK_TTL = { min: 60, max: 7 * 24 * 3600 } as const;

/**
 * Presigned file URLs (spec §1: `GET /v1/files/{id}` redirects to one): `{api}/v1/files/{id}/content` with the account,
 * the expiry and an HMAC-SHA256 over the three, under a key derived (HKDF) from the platform's secret for this
 * purpose only. The URL is the authority: whoever holds it may fetch that one file until it expires, which is why
 * links are short-lived and a new one is minted on each request rather than stored.
 */
export function createFileLinks(opts: { platformSecret: string; apiUrl: string; now: () => number; defaultTtlSeconds: number }) {
  const key = Buffer.from(hkdfSync('sha256', opts.platformSecret, 'agent-platform', 'file-links/v1', 32));
  const mac = (c: FileLinkClaims) => createHmac('sha256', key).update(`v1\n${c.accountId}\n${c.fileId}\n${c.expires}`).digest();
  return {
    /** A link to one file of one account, valid for `ttlSeconds` (the configured default when not given). */
    sign(accountId: string, fileId: string, ttlSeconds = opts.defaultTtlSeconds): FileLink {
      const expires = Math.floor(opts.now() / 1000) + ttlSeconds;
      const signature = mac({ accountId, fileId, expires }).toString('base64url');
      const q = new URLSearchParams({ account_id: accountId, expires: String(expires), signature });
      return { url: `${opts.apiUrl}/v1/files/${encodeURIComponent(fileId)}/content?${q}`, expiresAt: new Date(expires * 1000).toISOString() };
    },
    /**
     * The claims of a link's parts, or why they are refused: `signature` when it does not match what this platform
     * signs (anything altered), `expired` when its time has passed. The comparison takes constant time.
     */
    verify(fileId: string, q: { account_id?: string; expires?: string; signature?: string }): FileLinkClaims | 'signature' | 'expired' {
      if (!q.account_id || !q.expires || !q.signature || !/^[0-9]{1,12}$/.test(q.expires)) return 'signature';
      const claims = { accountId: q.account_id, fileId, expires: Number(q.expires) };
      const given = Buffer.from(q.signature, 'base64url');
      const want = mac(claims);
      if (given.length !== want.length || !timingSafeEqual(given, want)) return 'signature';
      return claims.expires * 1000 <= opts.now() ? 'expired' : claims;
    },
  };
}

export type FileLinks = ReturnType<typeof createFileLinks>;
