import type { Queryable } from './db.ts';
import { bindingWrites, type BindingTargetRef } from './bindings-repo.ts';

/** Which built-ins a gateway or agent exposes; every query is scoped by the target's account. */
export function builtinBindingsRepo(db: Queryable) {
  return {
    ...bindingWrites(db, 'builtin_bindings', 'builtin_id'),
    async list(accountId: string, target: BindingTargetRef): Promise<string[]> {
      const { rows } = await db.query<{ builtin_id: string }>(
        'select builtin_id from builtin_bindings where account_id = $1 and target_kind = $2 and target_id = $3 order by builtin_id',
        [accountId, target.kind, target.id],
      );
      return rows.map((r) => r.builtin_id);
    },
  };
}
