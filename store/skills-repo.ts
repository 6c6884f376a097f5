import type { Queryable } from './db.ts';

export type SkillSource = 'api' | 'import' | 'generate' | 'builder';

export interface SkillRecord {
  accountId: string;
  id: string;
  name: string;
  description: string;
  version: number;
  /** Bytes of every file of the bundle. */
  size: number;
  source: SkillSource;
  createdAt: string;
  createdBy: string;
  updatedAt: string;
  updatedBy: string;
}

export interface SkillFile {
  path: string;
  content: Buffer;
}

/** A file as its row names it: its blob (by SHA-256) and size; `inline` for rows written before migration 037. */
export interface SkillFileRef {
  path: string;
  sha256: string | null;
  size: number;
  inline: Buffer | null;
}

export interface SkillBinding {
  skillId: string;
  agentId: string;
  boundAt: string;
  boundBy: string;
}

type Row = { account_id: string; id: string; name: string; description: string; version: number; size: number; source: SkillSource; created_at: string | Date; created_by: string; updated_at: string | Date; updated_by: string };
const toRecord = (r: Row): SkillRecord => ({
  accountId: r.account_id,
  id: r.id,
  name: r.name,
  description: r.description,
  version: r.version,
  size: r.size,
  source: r.source,
  createdAt: new Date(r.created_at).toISOString(),
  createdBy: r.created_by,
  updatedAt: new Date(r.updated_at).toISOString(),
  updatedBy: r.updated_by,
});
const COLUMNS = 'account_id, id, name, description, version, size, source, created_at, created_by, updated_at, updated_by';
type BindingRow = { skill_id: string; agent_id: string; bound_at: string | Date; bound_by: string };
const toBinding = (r: BindingRow): SkillBinding => ({ skillId: r.skill_id, agentId: r.agent_id, boundAt: new Date(r.bound_at).toISOString(), boundBy: r.bound_by });

/** Skills, their files and their bindings to agents (migration 034); every query scoped by account. */
export function skillsRepo(db: Queryable) {
  /** Replaces a skill's files with `files`, whose bytes are in the blob store already (statements of the caller's transaction). */
  const writeFiles = async (accountId: string, skillId: string, files: readonly { path: string; sha256: string; size: number }[]) => {
    await db.query('delete from skill_files where account_id = $1 and skill_id = $2', [accountId, skillId]);
    if (files.length === 0) return;
    await db.query(
      `insert into skill_files (account_id, skill_id, path, sha256, size) select $1, $2, f.path, f.sha256, f.size from jsonb_to_recordset($3::jsonb) as f(path text, sha256 text, size int)`,
      [accountId, skillId, JSON.stringify(files)],
    );
  };
  type FileRow = { path: string; sha256: string | null; size: number; content: Buffer | Uint8Array | null };
  const toRef = (r: FileRow): SkillFileRef => ({ path: r.path, sha256: r.sha256, size: r.size, inline: r.content ? Buffer.from(r.content) : null });
  return {
    /** Inserts a skill with its files; false when the account has a skill of that name already. Run in a transaction. */
    async create(s: Omit<SkillRecord, 'version' | 'updatedAt' | 'updatedBy'>, files: readonly { path: string; sha256: string; size: number }[]): Promise<boolean> {
      const { rows } = await db.query<{ id: string }>(
        `insert into skills (account_id, id, name, description, version, size, source, created_at, created_by, updated_at, updated_by)
         values ($1, $2, $3, $4, 1, $5, $6, $7, $8, $7, $8) on conflict (account_id, name) do nothing returning id`,
        [s.accountId, s.id, s.name, s.description, s.size, s.source, s.createdAt, s.createdBy],
      );
      if (!rows[0]) return false;
      await writeFiles(s.accountId, s.id, files);
      return true;
    },
    /**
     * Changes a skill: its description, and its files when given (the version counts changes). 'conflict' when the
     * new name is another skill's; null when there is no such skill. Run in a transaction.
     */
    async update(accountId: string, id: string, change: { name?: string; description?: string; files?: readonly { path: string; sha256: string; size: number }[]; size?: number; at: string; by: string }): Promise<SkillRecord | 'conflict' | null> {
      if (change.name !== undefined) {
        const { rows } = await db.query<{ id: string }>('select id from skills where account_id = $1 and name = $2 and id <> $3', [accountId, change.name, id]);
        if (rows[0]) return 'conflict';
      }
      const { rows } = await db.query<Row>(
        `update skills set name = coalesce($3, name), description = coalesce($4, description), size = coalesce($5, size), version = version + 1, updated_at = $6, updated_by = $7
         where account_id = $1 and id = $2 returning ${COLUMNS}`,
        [accountId, id, change.name ?? null, change.description ?? null, change.size ?? null, change.at, change.by],
      );
      if (!rows[0]) return null;
      if (change.files) await writeFiles(accountId, id, change.files);
      return toRecord(rows[0]);
    },
    async get(accountId: string, id: string): Promise<SkillRecord | null> {
      const { rows } = await db.query<Row>(`select ${COLUMNS} from skills where account_id = $1 and id = $2`, [accountId, id]);
      return rows[0] ? toRecord(rows[0]) : null;
    },
    async byName(accountId: string, name: string): Promise<SkillRecord | null> {
      const { rows } = await db.query<Row>(`select ${COLUMNS} from skills where account_id = $1 and name = $2`, [accountId, name]);
      return rows[0] ? toRecord(rows[0]) : null;
    },
    /** A page of the account's skills by name; `total` of the whole list. */
    async list(accountId: string, q: { limit: number; offset: number; search?: string }): Promise<{ skills: SkillRecord[]; total: number }> {
      const search = q.search ? `%${q.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%` : null;
      const { rows } = await db.query<Row & { total: string }>(
        `select ${COLUMNS}, count(*) over () as total from skills where account_id = $1 and ($2::text is null or name ilike $2 or description ilike $2)
         order by name limit $3 offset $4`,
        [accountId, search, q.limit, q.offset],
      );
      const total = rows[0] ? Number(rows[0].total) : (await db.query<{ n: string }>('select count(*) as n from skills where account_id = $1 and ($2::text is null or name ilike $2 or description ilike $2)', [accountId, search])).rows[0]!.n;
      return { skills: rows.map(toRecord), total: Number(total) };
    },
    async remove(accountId: string, id: string): Promise<boolean> {
      const { rowCount } = await db.query('delete from skills where account_id = $1 and id = $2', [accountId, id]);
      return (rowCount ?? 0) > 0;
    },
    /** The files of a skill, by path: where their bytes are, not the bytes. */
    async files(accountId: string, id: string): Promise<SkillFileRef[]> {
      const { rows } = await db.query<FileRow>('select path, sha256, size, content from skill_files where account_id = $1 and skill_id = $2 order by path', [accountId, id]);
      return rows.map(toRef);
    },
    async file(accountId: string, id: string, path: string): Promise<SkillFileRef | null> {
      const { rows } = await db.query<FileRow>('select path, sha256, size, content from skill_files where account_id = $1 and skill_id = $2 and path = $3', [accountId, id, path]);
      return rows[0] ? toRef(rows[0]) : null;
    },
    /** Paths and sizes of the files of several skills (a list reads no bytes). */
    async sizes(accountId: string, ids: readonly string[]): Promise<Map<string, { path: string; size: number }[]>> {
      const out = new Map<string, { path: string; size: number }[]>(ids.map((i) => [i, []]));
      if (ids.length === 0) return out;
      const { rows } = await db.query<{ skill_id: string; path: string; size: number }>('select skill_id, path, size from skill_files where account_id = $1 and skill_id = any($2::uuid[]) order by skill_id, path', [accountId, ids]);
      for (const r of rows) out.get(r.skill_id)?.push({ path: r.path, size: r.size });
      return out;
    },
    /** Binds a skill to an agent of the same account; false when it was bound already. */
    async bind(accountId: string, skillId: string, agentId: string, at: string, by: string): Promise<boolean> {
      const { rows } = await db.query<{ n: number }>(
        `insert into skill_bindings (account_id, skill_id, agent_id, bound_at, bound_by)
         select $1, $2, id, $4, $5 from agents where account_id = $1 and id = $3
         on conflict do nothing returning 1 as n`,
        [accountId, skillId, agentId, at, by],
      );
      return rows.length > 0;
    },
    async unbind(accountId: string, skillId: string, agentId: string): Promise<boolean> {
      const { rowCount } = await db.query('delete from skill_bindings where account_id = $1 and skill_id = $2 and agent_id = $3', [accountId, skillId, agentId]);
      return (rowCount ?? 0) > 0;
    },
    async bindingsOfSkill(accountId: string, skillId: string): Promise<SkillBinding[]> {
      const { rows } = await db.query<BindingRow>('select skill_id, agent_id, bound_at, bound_by from skill_bindings where account_id = $1 and skill_id = $2 order by bound_at, agent_id', [accountId, skillId]);
      return rows.map(toBinding);
    },
    /** The skills bound to an agent, by name. */
    async ofAgent(accountId: string, agentId: string): Promise<SkillRecord[]> {
      const { rows } = await db.query<Row>(
        `select ${COLUMNS.split(', ').map((c) => `s.${c}`).join(', ')} from skills s join skill_bindings b on b.account_id = s.account_id and b.skill_id = s.id
         where s.account_id = $1 and b.agent_id = $2 order by s.name`,
        [accountId, agentId],
      );
      return rows.map(toRecord);
    },
  };
}
