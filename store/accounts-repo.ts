import type { Queryable } from './db.ts';

export type Role = 'owner' | 'admin' | 'member' | 'viewer';
export type PrincipalKind = 'user' | 'service';

export interface AccountRecord {
  id: string;
  name: string;
  createdAt: string;
}

export interface PrincipalRecord {
  id: string;
  accountId: string;
  kind: PrincipalKind;
  name: string;
  email: string | null;
  status: 'active' | 'disabled';
  createdAt: string;
}

export interface MemberRecord extends PrincipalRecord {
  role: Role | null;
}

type PrincipalRow = {
  id: string;
  account_id: string;
  kind: PrincipalKind;
  name: string;
  email: string | null;
  status: 'active' | 'disabled';
  created_at: string;
  role?: Role | null;
};

const toPrincipal = (r: PrincipalRow): MemberRecord => ({
  id: r.id,
  accountId: r.account_id,
  kind: r.kind,
  name: r.name,
  email: r.email,
  status: r.status,
  createdAt: r.created_at,
  role: r.role ?? null,
});

export function accountsRepo(db: Queryable) {
  return {
    async create(a: { id: string; name: string }): Promise<AccountRecord> {
      const { rows } = await db.query<{ id: string; name: string; created_at: string }>(
        'insert into accounts (id, name) values ($1, $2) returning id, name, created_at',
        [a.id, a.name],
      );
      const r = rows[0]!;
      return { id: r.id, name: r.name, createdAt: r.created_at };
    },
    /**
     * Holds the account's row until the transaction ends: what counts the account's rows against a limit before it
     * adds one (attachments, schedules) runs one after another per account (other accounts are not held).
     */
    async lock(id: string): Promise<void> {
      await db.query('select id from accounts where id = $1 for update', [id]);
    },
    async get(id: string): Promise<AccountRecord | null> {
      const { rows } = await db.query<{ id: string; name: string; created_at: string }>(
        'select id, name, created_at from accounts where id = $1',
        [id],
      );
      const r = rows[0];
      return r ? { id: r.id, name: r.name, createdAt: r.created_at } : null;
    },
    /** The accounts of exactly this name (names are not unique: the caller decides what several mean). */
    async byName(name: string): Promise<AccountRecord[]> {
      const { rows } = await db.query<{ id: string; name: string; created_at: string }>('select id, name, created_at from accounts where name = $1 order by created_at, id', [name]);
      return rows.map((r) => ({ id: r.id, name: r.name, createdAt: r.created_at }));
    },
    async list(): Promise<AccountRecord[]> {
      const { rows } = await db.query<{ id: string; name: string; created_at: string }>('select id, name, created_at from accounts order by created_at, id');
      return rows.map((r) => ({ id: r.id, name: r.name, createdAt: r.created_at }));
    },
    async count(): Promise<number> {
      const { rows } = await db.query<{ n: number }>('select count(*)::int as n from accounts');
      return Number(rows[0]?.n ?? 0);
    },
  };
}

export function principalsRepo(db: Queryable) {
  const select = `select p.id, p.account_id, p.kind, p.name, p.email, p.status, p.created_at, m.role
    from principals p left join memberships m on m.principal_id = p.id and m.account_id = p.account_id`;
  return {
    /** Creates the principal and its membership (with `role`) in the caller's transaction. */
    async create(p: {
      id: string;
      accountId: string;
      kind: PrincipalKind;
      name: string;
      email?: string | null;
      passwordHash?: string | null;
      role: Role;
    }): Promise<MemberRecord> {
      await db.query(
        'insert into principals (id, account_id, kind, name, email, password_hash) values ($1, $2, $3, $4, $5, $6)',
        [p.id, p.accountId, p.kind, p.name, p.email ?? null, p.passwordHash ?? null],
      );
      await db.query('insert into memberships (account_id, principal_id, role) values ($1, $2, $3)', [
        p.accountId,
        p.id,
        p.role,
      ]);
      return (await this.get(p.accountId, p.id))!;
    },
    /** Tenant-scoped read: a principal of another account is not found. */
    async get(accountId: string, id: string): Promise<MemberRecord | null> {
      const { rows } = await db.query<PrincipalRow>(`${select} where p.account_id = $1 and p.id = $2`, [accountId, id]);
      return rows[0] ? toPrincipal(rows[0]) : null;
    },
    /** Unscoped read by id, for resolving the owner of an already-verified credential. */
    async getById(id: string): Promise<MemberRecord | null> {
      const { rows } = await db.query<PrincipalRow>(`${select} where p.id = $1`, [id]);
      return rows[0] ? toPrincipal(rows[0]) : null;
    },
    async findUserByEmail(email: string): Promise<(MemberRecord & { passwordHash: string | null }) | null> {
      const { rows } = await db.query<PrincipalRow & { password_hash: string | null }>(
        `${select.replace('p.created_at,', 'p.created_at, p.password_hash,')} where lower(p.email) = lower($1) and p.kind = 'user'`,
        [email],
      );
      const r = rows[0];
      return r ? { ...toPrincipal(r), passwordHash: r.password_hash } : null;
    },
    /** The account's principals of this name, or of this email (any case): users are named by their email. */
    async byName(accountId: string, name: string): Promise<MemberRecord[]> {
      const { rows } = await db.query<PrincipalRow>(`${select} where p.account_id = $1 and (p.name = $2 or lower(p.email) = lower($2)) order by p.created_at, p.id`, [accountId, name]);
      return rows.map(toPrincipal);
    },
    async list(accountId: string): Promise<MemberRecord[]> {
      const { rows } = await db.query<PrincipalRow>(`${select} where p.account_id = $1 order by p.created_at, p.id`, [
        accountId,
      ]);
      return rows.map(toPrincipal);
    },
  };
}
