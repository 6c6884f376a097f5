import type { Queryable } from './db.ts';

export type StoredCapabilityType = 'plugin' | 'connector';

export interface CapabilityVersionRecord {
  versionNumber: number;
  /** dormant, activating, active or superseded (absent on a version being registered). */
  status?: string;
  statusReason?: string | null;
  createdAt: string;
  createdBy: string;
  tools: { name: string; description: string }[];
  metadata: Record<string, unknown>;
  permissions: Record<string, unknown>;
  resources: Record<string, unknown>;
}

export interface CapabilityRecord {
  id: string;
  accountId: string;
  type: StoredCapabilityType;
  name: string;
  namespace: string;
  description: string;
  logoUrl: string;
  activeVersion: number;
  createdAt: string;
  createdBy: string;
  updatedAt: string;
  updatedBy: string;
  versions: CapabilityVersionRecord[];
}

export interface VersionArtifacts {
  wasmHash: string;
  config: unknown;
  env: Record<string, string>;
  artifactHash: string | null;
  /** The idempotency key of the activation that flipped this version, and the version it replaced. */
  activationKey: string | null;
  activatedFrom: number | null;
}

export interface ServingVersion {
  activeVersion: number;
  tools: unknown[];
  config: unknown;
  env: Record<string, string>;
  artifactHash: string | null;
}

export interface CapabilityQuery {
  accountId: string;
  id?: string;
  type?: StoredCapabilityType;
  namespace?: string;
  search?: string;
  limit: number;
  offset: number;
}

type Row = {
  id: string;
  account_id: string;
  type: StoredCapabilityType;
  name: string;
  namespace: string;
  description: string;
  logo_url: string;
  active_version: number;
  created_at: string;
  created_by: string;
  updated_at: string;
  updated_by: string;
};
type VersionRow = {
  capability_id: string;
  version_number: number;
  status: string;
  status_reason: string | null;
  created_at: string;
  created_by: string;
  tools: CapabilityVersionRecord['tools'];
  metadata: Record<string, unknown>;
  permissions: Record<string, unknown>;
  resources: Record<string, unknown>;
};

const COLUMNS =
  'id, account_id, type, name, namespace, description, logo_url, active_version, created_at, created_by, updated_at, updated_by';

/** `%` and `_` in a user's search text are literals, not wildcards. */
const likePattern = (s: string) => `%${s.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

export function capabilitiesRepo(db: Queryable) {
  return {
    async create(c: {
      id: string;
      accountId: string;
      type: StoredCapabilityType;
      name: string;
      namespace: string;
      description?: string;
      logoUrl?: string;
      createdBy: string;
    }): Promise<void> {
      await db.query(
        `insert into capabilities (id, account_id, type, name, namespace, description, logo_url, created_by, updated_by)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $8)`,
        [c.id, c.accountId, c.type, c.name, c.namespace, c.description ?? '', c.logoUrl ?? '', c.createdBy],
      );
    },
    async addVersion(capabilityId: string, accountId: string, v: CapabilityVersionRecord): Promise<void> {
      await db.query(
        `insert into capability_versions (capability_id, account_id, version_number, created_at, created_by, tools, metadata, permissions, resources)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
        [
          capabilityId,
          accountId,
          v.versionNumber,
          v.createdAt,
          v.createdBy,
          JSON.stringify(v.tools),
          JSON.stringify(v.metadata),
          JSON.stringify(v.permissions),
          JSON.stringify(v.resources),
        ],
      );
    },
    async exists(accountId: string, id: string): Promise<boolean> {
      const { rows } = await db.query('select 1 from capabilities where account_id = $1 and id = $2', [accountId, id]);
      return rows.length > 0;
    },
    /** Capabilities of the account with this name (names are not unique; namespaces are). */
    async byName(accountId: string, name: string): Promise<{ id: string; name: string }[]> {
      const { rows } = await db.query<{ id: string; name: string }>('select id, name from capabilities where account_id = $1 and name = $2 order by created_at', [accountId, name]);
      return rows;
    },
    async byNamespace(accountId: string, namespace: string): Promise<{ id: string; name: string } | null> {
      const { rows } = await db.query<{ id: string; name: string }>('select id, name from capabilities where account_id = $1 and namespace = $2', [accountId, namespace]);
      return rows[0] ?? null;
    },
    /** Locks the capability row for the caller's transaction and returns the next version number. */
    async nextVersion(accountId: string, id: string): Promise<number> {
      await db.query('select id from capabilities where account_id = $1 and id = $2 for update', [accountId, id]);
      const { rows } = await db.query<{ n: number }>(
        'select coalesce(max(version_number), 0)::int + 1 as n from capability_versions where account_id = $1 and capability_id = $2',
        [accountId, id],
      );
      return Number(rows[0]!.n);
    },
    /** The artifacts of a version stored at upload: component hash, validated config, env values, warnings. */
    async setVersionArtifacts(accountId: string, id: string, version: number, a: { wasmHash: string; config: unknown; env: Record<string, string>; schemaWarnings: string[] }): Promise<void> {
      await db.query(
        `update capability_versions set wasm_hash = $4, config = $5, env = $6, schema_warnings = $7
         where account_id = $1 and capability_id = $2 and version_number = $3`,
        [accountId, id, version, a.wasmHash, JSON.stringify(a.config), JSON.stringify(a.env), JSON.stringify(a.schemaWarnings)],
      );
    },
    async versionArtifacts(accountId: string, id: string, version: number): Promise<VersionArtifacts | null> {
      const { rows } = await db.query<{ wasm_hash: string; config: unknown; env: Record<string, string>; artifact_hash: string | null; activation_key: string | null; activated_from: number | null }>(
        `select wasm_hash, config, env, artifact_hash, activation_key, activated_from from capability_versions
         where account_id = $1 and capability_id = $2 and version_number = $3 and wasm_hash is not null`,
        [accountId, id, version],
      );
      const r = rows[0];
      return r ? { wasmHash: r.wasm_hash, config: r.config, env: r.env, artifactHash: r.artifact_hash, activationKey: r.activation_key, activatedFrom: r.activated_from === null ? null : Number(r.activated_from) } : null;
    },
    /** A version's lifecycle state, as its actor projects it, and the reason of its last failed activation. */
    async setVersionStatus(accountId: string, id: string, version: number, status: string, reason: string | null): Promise<void> {
      await db.query('update capability_versions set status = $4, status_reason = $5 where account_id = $1 and capability_id = $2 and version_number = $3', [accountId, id, version, status, reason]);
    },
    /** What serves a capability now: its active version number and that version's tools, config, env and artifacts. */
    async servingVersion(accountId: string, id: string): Promise<ServingVersion | null> {
      const { rows } = await db.query<{ active_version: number; tools: unknown[] | null; config: unknown; env: Record<string, string> | null; artifact_hash: string | null }>(
        `select c.active_version, v.tools, v.config, v.env, v.artifact_hash
         from capabilities c left join capability_versions v on v.capability_id = c.id and v.account_id = c.account_id and v.version_number = c.active_version
         where c.account_id = $1 and c.id = $2`,
        [accountId, id],
      );
      const r = rows[0];
      return r ? { activeVersion: Number(r.active_version), tools: r.tools ?? [], config: r.config, env: r.env ?? {}, artifactHash: r.artifact_hash } : null;
    },
    async activeVersion(accountId: string, id: string): Promise<number> {
      const { rows } = await db.query<{ v: number }>('select active_version as v from capabilities where account_id = $1 and id = $2 for update', [accountId, id]);
      return Number(rows[0]?.v ?? 0);
    },
    /**
     * Records a version's compiled artifacts and makes it the active one (call inside a transaction, after locking the
     * capability with `activeVersion`); `key` and `previous` let a resumed activation see it already happened.
     */
    async recordActivation(accountId: string, id: string, version: number, artifactHash: string, by: string, key: string, previous: number, flip = true): Promise<void> {
      const v = await db.query(
        'update capability_versions set artifact_hash = $4, activation_key = $5, activated_from = $6 where account_id = $1 and capability_id = $2 and version_number = $3',
        [accountId, id, version, artifactHash, key, previous],
      );
      const c = flip ? await db.query('update capabilities set active_version = $3, updated_at = now(), updated_by = $4 where account_id = $1 and id = $2', [accountId, id, version, by]) : { rowCount: 1 };
      if (v.rowCount !== 1 || c.rowCount !== 1) throw new Error(`version ${version} of ${id} vanished during activation`);
    },
    async setActiveVersion(accountId: string, id: string, version: number, by: string): Promise<boolean> {
      const { rowCount } = await db.query(
        'update capabilities set active_version = $3, updated_at = now(), updated_by = $4 where account_id = $1 and id = $2',
        [accountId, id, version, by],
      );
      return rowCount > 0;
    },
    /** One capability of an account, with its versions; null for an unknown id or another account's. */
    async get(accountId: string, id: string): Promise<CapabilityRecord | null> {
      return (await this.list({ accountId, id, limit: 1, offset: 0 })).items[0] ?? null;
    },
    /** One page of an account's capabilities, with their versions, and the total that matched. */
    async list(q: CapabilityQuery): Promise<{ items: CapabilityRecord[]; total: number }> {
      const where = ['account_id = $1'];
      const params: unknown[] = [q.accountId];
      if (q.id) where.push(`id = $${params.push(q.id)}`);
      if (q.type) where.push(`type = $${params.push(q.type)}`);
      if (q.namespace) where.push(`namespace = $${params.push(q.namespace)}`);
      if (q.search) {
        const n = params.push(likePattern(q.search));
        where.push(`(name ilike $${n} escape '\\' or description ilike $${n} escape '\\')`);
      }
      const filter = where.join(' and ');
      const total = await db.query<{ n: number }>(`select count(*)::int as n from capabilities where ${filter}`, params);
      const page = await db.query<Row>(
        `select ${COLUMNS} from capabilities where ${filter} order by name, id limit $${params.length + 1} offset $${params.length + 2}`,
        [...params, q.limit, q.offset],
      );
      const ids = page.rows.map((r) => r.id);
      const versions = ids.length
        ? (
            await db.query<VersionRow>(
              `select capability_id, version_number, status, status_reason, created_at, created_by, tools, metadata, permissions, resources
               from capability_versions where account_id = $1 and capability_id = any($2::uuid[]) order by version_number`,
              [q.accountId, ids],
            )
          ).rows
        : [];
      return {
        total: Number(total.rows[0]?.n ?? 0),
        items: page.rows.map((r) => ({
          id: r.id,
          accountId: r.account_id,
          type: r.type,
          name: r.name,
          namespace: r.namespace,
          description: r.description,
          logoUrl: r.logo_url,
          activeVersion: Number(r.active_version),
          createdAt: r.created_at,
          createdBy: r.created_by,
          updatedAt: r.updated_at,
          updatedBy: r.updated_by,
          versions: versions
            .filter((v) => v.capability_id === r.id)
            .map((v) => ({
              versionNumber: Number(v.version_number),
              status: v.status,
              statusReason: v.status_reason,
              createdAt: v.created_at,
              createdBy: v.created_by,
              tools: v.tools,
              metadata: v.metadata,
              permissions: v.permissions,
              resources: v.resources,
            })),
        })),
      };
    },
  };
}
