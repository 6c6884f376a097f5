import type { Queryable } from './db.ts';
import type { BindingTargetRef } from './bindings-repo.ts';

export type ConnectorKind = 'custom-mcp' | 'rest' | 'mcp-registry';

export interface ConnectorRecord {
  capabilityId: string;
  accountId: string;
  kind: ConnectorKind;
  namespace: string;
  name: string;
  url: string;
  /** The sealed credentials (runtime/connectors/sealed-secrets.ts), or null. */
  sealedSecret: Buffer | null;
  ttlMs: number;
  /** REST: the operations (runtime/connectors RestOperation); MCP: `{name, description}` of the tools listed at creation. */
  operations: unknown[];
  /** A registry connector's origin, else null. */
  source: { registry: string; server: string; version: string } | null;
}

type Row = { capability_id: string; account_id: string; kind: ConnectorKind; namespace: string; name: string; url: string; sealed_secret: Uint8Array | null; ttl_ms: number; operations: unknown[]; source: ConnectorRecord['source'] };
const toRecord = (r: Row): ConnectorRecord => ({
  capabilityId: r.capability_id,
  accountId: r.account_id,
  kind: r.kind,
  namespace: r.namespace,
  name: r.name,
  url: r.url,
  sealedSecret: r.sealed_secret ? Buffer.from(r.sealed_secret) : null,
  ttlMs: Number(r.ttl_ms),
  operations: r.operations,
  source: r.source,
});
const COLUMNS = 'c.capability_id, c.account_id, c.kind, k.namespace, k.name, c.url, c.sealed_secret, c.ttl_ms, c.operations, c.source';

/** Connector rows beside their capability rows; every query is scoped by account. */
export function connectorsRepo(db: Queryable) {
  return {
    async create(r: Omit<ConnectorRecord, 'namespace' | 'name'>): Promise<void> {
      await db.query('insert into connectors (capability_id, account_id, kind, url, sealed_secret, ttl_ms, operations, source) values ($1, $2, $3, $4, $5, $6, $7, $8)', [
        r.capabilityId,
        r.accountId,
        r.kind,
        r.url,
        r.sealedSecret,
        r.ttlMs,
        JSON.stringify(r.operations),
        r.source === null ? null : JSON.stringify(r.source),
      ]);
    },
    async get(accountId: string, capabilityId: string): Promise<ConnectorRecord | null> {
      const { rows } = await db.query<Row>(`select ${COLUMNS} from connectors c join capabilities k on k.id = c.capability_id and k.account_id = c.account_id where c.account_id = $1 and c.capability_id = $2`, [
        accountId,
        capabilityId,
      ]);
      return rows[0] ? toRecord(rows[0]) : null;
    },
    /** Every connector of the account, by name. */
    async list(accountId: string): Promise<ConnectorRecord[]> {
      const { rows } = await db.query<Row>(`select ${COLUMNS} from connectors c join capabilities k on k.id = c.capability_id and k.account_id = c.account_id where c.account_id = $1 order by k.name, k.namespace`, [
        accountId,
      ]);
      return rows.map(toRecord);
    },
    /** Several connectors of one account by id (a page of the capabilities list). */
    async many(accountId: string, capabilityIds: readonly string[]): Promise<ConnectorRecord[]> {
      if (capabilityIds.length === 0) return [];
      const { rows } = await db.query<Row>(`select ${COLUMNS} from connectors c join capabilities k on k.id = c.capability_id and k.account_id = c.account_id where c.account_id = $1 and c.capability_id = any($2::uuid[])`, [
        accountId,
        capabilityIds,
      ]);
      return rows.map(toRecord);
    },
    /** The connectors bound to a gateway or agent, by namespace. */
    async bound(accountId: string, target: BindingTargetRef): Promise<ConnectorRecord[]> {
      const { rows } = await db.query<Row>(
        `select ${COLUMNS} from tool_bindings b
         join connectors c on c.capability_id = b.capability_id and c.account_id = b.account_id
         join capabilities k on k.id = c.capability_id and k.account_id = c.account_id
         where b.account_id = $1 and b.target_kind = $2 and b.target_id = $3 order by k.namespace`,
        [accountId, target.kind, target.id],
      );
      return rows.map(toRecord);
    },
  };
}
