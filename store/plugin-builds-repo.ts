import type { RowWrites } from './actor-snapshots-repo.ts';
import type { Queryable } from './db.ts';

export type BuildStatus = 'queued' | 'building' | 'succeeded' | 'failed' | 'canceled';

export interface PluginBuildRow {
  accountId: string;
  id: string;
  name: string;
  description: string;
  ownerId: string;
  status: BuildStatus;
  capabilityId: string | null;
  version: number | null;
  logs: string;
  error: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface BuildSource {
  source: string;
  wit: string;
  world: string;
  config: string | null;
}

type Row = { account_id: string; id: string; name: string; description: string; owner_id: string; status: BuildStatus; capability_id: string | null; version: number | null; logs: string; error: string | null; created_at: string | Date; updated_at: string | Date };
const COLUMNS = 'account_id, id, name, description, owner_id, status, capability_id, version, logs, error, created_at, updated_at';
const toRow = (r: Row): PluginBuildRow => ({
  accountId: r.account_id,
  id: r.id,
  name: r.name,
  description: r.description,
  ownerId: r.owner_id,
  status: r.status,
  capabilityId: r.capability_id,
  version: r.version,
  logs: r.logs,
  error: r.error,
  createdAt: new Date(r.created_at).toISOString(),
  updatedAt: new Date(r.updated_at).toISOString(),
});

/** A build's status written by its actor's turn, in the turn's own statement (its projection). */
export const buildRowWrite =
  (b: Pick<PluginBuildRow, 'accountId' | 'id' | 'status' | 'capabilityId' | 'version' | 'logs' | 'error' | 'updatedAt'>): RowWrites =>
  ({ arg, wrote }) => [
    `update plugin_builds set status = ${arg(b.status)}::text, capability_id = ${arg(b.capabilityId)}::uuid, version = ${arg(b.version)}::int, logs = ${arg(b.logs)}::text,
       error = ${arg(b.error)}::text, updated_at = ${arg(b.updatedAt)}::timestamptz
     where account_id = ${arg(b.accountId)}::uuid and id = ${arg(b.id)}::uuid and ${wrote}`,
  ];

/** Plugin builds (migration 036): what was sent and how it went; scoped by account. */
export function pluginBuildsRepo(db: Queryable) {
  return {
    async create(b: Omit<PluginBuildRow, 'status' | 'capabilityId' | 'version' | 'logs' | 'error' | 'updatedAt'> & BuildSource): Promise<void> {
      await db.query(
        `insert into plugin_builds (account_id, id, name, description, owner_id, source, wit, world, config, status, created_at, updated_at)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'queued', $10, $10)`,
        [b.accountId, b.id, b.name, b.description, b.ownerId, b.source, b.wit, b.world, b.config, b.createdAt],
      );
    },
    async get(accountId: string, id: string): Promise<PluginBuildRow | null> {
      const { rows } = await db.query<Row>(`select ${COLUMNS} from plugin_builds where account_id = $1 and id = $2`, [accountId, id]);
      return rows[0] ? toRow(rows[0]) : null;
    },
    async source(accountId: string, id: string): Promise<BuildSource | null> {
      const { rows } = await db.query<BuildSource>('select source, wit, world, config from plugin_builds where account_id = $1 and id = $2', [accountId, id]);
      return rows[0] ?? null;
    },
    async list(accountId: string, q: { ownerId?: string; limit: number; before?: { createdAt: string; id: string } }): Promise<PluginBuildRow[]> {
      const { rows } = await db.query<Row>(
        `select ${COLUMNS} from plugin_builds where account_id = $1 and ($2::text is null or owner_id = $2) and ($3::timestamptz is null or (created_at, id) < ($3::timestamptz, $4::uuid))
         order by created_at desc, id desc limit $5`,
        [accountId, q.ownerId ?? null, q.before?.createdAt ?? null, q.before?.id ?? null, q.limit],
      );
      return rows.map(toRow);
    },
  };
}
