import type { Queryable } from './db.ts';

/** What tools are bound to: a gateway (MCP surface) or an agent (A2A surface). */
export interface BindingTargetRef {
  kind: 'gateway' | 'agent';
  id: string;
}

export interface BindingRecord {
  targetKind: 'gateway' | 'agent';
  targetId: string;
  accountId: string;
  capabilityId: string;
  createdAt: string;
}

/** A tool of a bound plugin at its serving version, as the plugin tool source reads it. */
export interface BoundPluginTools {
  capabilityId: string;
  tools: { name: string; description?: string; inputSchema: Record<string, unknown> }[];
  config: Record<string, unknown> | null;
}

/**
 * Binding and unbinding for a table of what a gateway or agent exposes (capabilities, built-ins): the same rows, keyed
 * by target and the bound thing's id. `table` and `column` are this module's constants, never input.
 */
export function bindingWrites(db: Queryable, table: 'tool_bindings' | 'builtin_bindings', column: 'capability_id' | 'builtin_id') {
  return {
    /** False when the binding was there already. */
    async bind(accountId: string, target: BindingTargetRef, id: string, by: string): Promise<boolean> {
      const { rowCount } = await db.query(
        `insert into ${table} (account_id, target_kind, target_id, ${column}, created_by) values ($1, $2, $3, $4, $5)
         on conflict (target_kind, target_id, ${column}) do nothing`,
        [accountId, target.kind, target.id, id, by],
      );
      return rowCount > 0;
    },
    /** False when there was no such binding. */
    async unbind(accountId: string, target: BindingTargetRef, id: string): Promise<boolean> {
      const { rowCount } = await db.query(`delete from ${table} where account_id = $1 and target_kind = $2 and target_id = $3 and ${column} = $4`, [accountId, target.kind, target.id, id]);
      return rowCount > 0;
    },
  };
}

/** Which capabilities a gateway or agent exposes; every query is scoped by the target's account. */
export function bindingsRepo(db: Queryable) {
  return {
    ...bindingWrites(db, 'tool_bindings', 'capability_id'),
    async list(accountId: string, target: BindingTargetRef): Promise<BindingRecord[]> {
      const { rows } = await db.query<{ target_kind: 'gateway' | 'agent'; target_id: string; account_id: string; capability_id: string; created_at: string }>(
        `select target_kind, target_id, account_id, capability_id, created_at from tool_bindings
         where account_id = $1 and target_kind = $2 and target_id = $3 order by created_at, capability_id`,
        [accountId, target.kind, target.id],
      );
      return rows.map((r) => ({ targetKind: r.target_kind, targetId: r.target_id, accountId: r.account_id, capabilityId: r.capability_id, createdAt: r.created_at }));
    },
    /** The plugins bound to a target that have a serving version (activated, artifacts recorded), by namespace. */
    async boundPlugins(accountId: string, target: BindingTargetRef): Promise<BoundPluginTools[]> {
      const { rows } = await db.query<{ capability_id: string; tools: BoundPluginTools['tools'] | null; config: Record<string, unknown> | null }>(
        `select b.capability_id, v.tools, v.config
         from tool_bindings b
         join capabilities c on c.id = b.capability_id and c.account_id = b.account_id
         join capability_versions v on v.capability_id = c.id and v.account_id = c.account_id and v.version_number = c.active_version
         where b.account_id = $1 and b.target_kind = $2 and b.target_id = $3 and c.active_version > 0 and v.artifact_hash is not null
         order by c.namespace`,
        [accountId, target.kind, target.id],
      );
      return rows.map((r) => ({ capabilityId: r.capability_id, tools: r.tools ?? [], config: r.config }));
    },
  };
}
