import type { Queryable } from './db.ts';

export interface ApiKeyRecord {
  id: string;
  accountId: string;
  principalId: string;
  /** The operator's name for the key, unique among the account's keys that are not revoked; null for none. */
  name: string | null;
  secretHash: string;
  expiresAt: string | null;
  revokedAt: string | null;
  createdAt: string;
}

type Row = {
  id: string;
  account_id: string;
  principal_id: string;
  name: string | null;
  secret_hash: string;
  expires_at: string | null;
  revoked_at: string | null;
  created_at: string;
};

const toRecord = (r: Row): ApiKeyRecord => ({
  id: r.id,
  accountId: r.account_id,
  principalId: r.principal_id,
  name: r.name,
  secretHash: r.secret_hash,
  expiresAt: r.expires_at,
  revokedAt: r.revoked_at,
  createdAt: r.created_at,
});

const COLUMNS = 'id, account_id, principal_id, name, secret_hash, expires_at, revoked_at, created_at';

export function apiKeysRepo(db: Queryable) {
  return {
    async create(k: {
      id: string;
      accountId: string;
      principalId: string;
      name?: string | null;
      secretHash: string;
      expiresAt: string | null;
    }): Promise<ApiKeyRecord> {
      const { rows } = await db.query<Row>(
        `insert into api_keys (id, account_id, principal_id, name, secret_hash, expires_at) values ($1, $2, $3, $4, $5, $6) returning ${COLUMNS}`,
        [k.id, k.accountId, k.principalId, k.name ?? null, k.secretHash, k.expiresAt],
      );
      return toRecord(rows[0]!);
    },
    /** By key id alone: the id is embedded in the presented key, so this runs before the account is known. */
    async get(id: string): Promise<ApiKeyRecord | null> {
      const { rows } = await db.query<Row>(`select ${COLUMNS} from api_keys where id = $1`, [id]);
      return rows[0] ? toRecord(rows[0]) : null;
    },
    async list(accountId: string): Promise<ApiKeyRecord[]> {
      const { rows } = await db.query<Row>(
        `select ${COLUMNS} from api_keys where account_id = $1 order by created_at, id`,
        [accountId],
      );
      return rows.map(toRecord);
    },
    /** The account's key of this name that is not revoked (at most one: the name is unique among those). */
    async byName(accountId: string, name: string): Promise<ApiKeyRecord | null> {
      const { rows } = await db.query<Row>(`select ${COLUMNS} from api_keys where account_id = $1 and name = $2 and revoked_at is null`, [accountId, name]);
      return rows[0] ? toRecord(rows[0]) : null;
    },
    /**
     * Sets the revocation time once; revoking again keeps the first time. Returns false for a key the account does not
     * hold (scoped like every other write: an id alone never reaches another account's key).
     */
    async revoke(accountId: string, id: string, at: string): Promise<boolean> {
      const { rowCount } = await db.query(
        'update api_keys set revoked_at = coalesce(revoked_at, $2) where id = $1 and account_id = $3',
        [id, at, accountId],
      );
      return rowCount > 0;
    },
  };
}
