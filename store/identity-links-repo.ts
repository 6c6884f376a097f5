import type { Queryable } from './db.ts';

export interface IdentityLink {
  provider: string;
  externalId: string;
  principalId: string;
  displayName: string | null;
  linkedAt: string;
}

export interface LinkCodeInsert {
  codeHash: string;
  provider: string;
  externalId: string;
  displayName: string | null;
  createdBy: string;
  expiresAt: string;
}

type LinkRow = { provider: string; external_id: string; principal_id: string; display_name: string | null; linked_at: string | Date };
const toLink = (r: LinkRow): IdentityLink => ({
  provider: r.provider,
  externalId: r.external_id,
  principalId: r.principal_id,
  displayName: r.display_name,
  linkedAt: new Date(r.linked_at).toISOString(),
});

/** Outside identities linked to principals, and the one-time codes that link them (migration 033). */
export function identityLinksRepo(db: Queryable) {
  return {
    async addCode(accountId: string, c: LinkCodeInsert): Promise<void> {
      await db.query(
        'insert into identity_link_codes (account_id, code_hash, provider, external_id, display_name, created_by, expires_at) values ($1, $2, $3, $4, $5, $6, $7)',
        [accountId, c.codeHash, c.provider, c.externalId, c.displayName, c.createdBy, c.expiresAt],
      );
    },
    /**
     * Consumes a code of the account (single use: it is deleted whether or not it was still valid) and links its
     * identity to `principalId`, replacing an earlier link of that identity. Null when there was no such code or it
     * had expired at `at`.
     */
    async redeem(accountId: string, codeHash: string, principalId: string, at: string): Promise<IdentityLink | null> {
      const { rows } = await db.query<LinkRow>(
        `with used as (delete from identity_link_codes where account_id = $1 and code_hash = $2 returning provider, external_id, display_name, expires_at)
         insert into identity_links (account_id, provider, external_id, principal_id, display_name, linked_at)
         select $1, provider, external_id, $3::uuid, display_name, $4::timestamptz from used where expires_at > $4::timestamptz
         on conflict (account_id, provider, external_id) do update set principal_id = excluded.principal_id, display_name = excluded.display_name, linked_at = excluded.linked_at
         returning provider, external_id, principal_id, display_name, linked_at`,
        [accountId, codeHash, principalId, at],
      );
      return rows[0] ? toLink(rows[0]) : null;
    },
    async find(accountId: string, provider: string, externalId: string): Promise<IdentityLink | null> {
      const { rows } = await db.query<LinkRow>('select provider, external_id, principal_id, display_name, linked_at from identity_links where account_id = $1 and provider = $2 and external_id = $3', [accountId, provider, externalId]);
      return rows[0] ? toLink(rows[0]) : null;
    },
    async ofPrincipal(accountId: string, principalId: string): Promise<IdentityLink[]> {
      const { rows } = await db.query<LinkRow>('select provider, external_id, principal_id, display_name, linked_at from identity_links where account_id = $1 and principal_id = $2 order by linked_at', [accountId, principalId]);
      return rows.map(toLink);
    },
    /** Removes expired codes; how many. */
    async purgeExpired(at: Date): Promise<number> {
      const { rowCount } = await db.query('delete from identity_link_codes where expires_at <= $1', [at.toISOString()]);
      return rowCount ?? 0;
    },
  };
}
