import type { Store } from '../../store/index.ts';
import type { Workflows } from '../workflows/index.ts';
import { requireAccount } from './resolve.ts';

/**
 * The operator's workflow commands (the management API reads workflows and runs them, but writes none, spec §1):
 * put a definition (a new workflow, or the next version of the one of that name), list, show, delete.
 */
export function createWorkflowAdmin(deps: { store: Store; workflows: Workflows }) {
  const account = async (ref: unknown) => (await requireAccount(deps.store, ref)).id;
  const view = (w: { id: string; name: string; description: string; version: number; createdAt: string; updatedAt: string; definition?: unknown }, full = false) => ({
    id: w.id,
    name: w.name,
    description: w.description,
    version: w.version,
    created_at: w.createdAt,
    updated_at: w.updatedAt,
    ...(full ? { definition: w.definition } : {}),
  });
  return {
    async putWorkflow(p: { account: string; definition: unknown }) {
      return view(await deps.workflows.put(await account(p.account), p.definition), true);
    },
    async listWorkflows(p: { account: string }) {
      return (await deps.workflows.list(await account(p.account))).map((w) => view(w));
    },
    async showWorkflow(p: { account: string; workflow: string }) {
      return view(await deps.workflows.get(await account(p.account), String(p.workflow ?? '')), true);
    },
    async deleteWorkflow(p: { account: string; workflow: string }) {
      const accountId = await account(p.account);
      const w = await deps.workflows.get(accountId, String(p.workflow ?? ''));
      await deps.workflows.remove(accountId, w.id);
      return { deleted: w.id, name: w.name };
    },
  };
}
