import { randomUUID } from 'node:crypto';
import type { WorkflowDefinition } from '../../actors/index.ts';
import type { AttachmentTargetKind, Store, WorkflowRecord } from '../../store/index.ts';
import type { Bus } from '../core/bus/index.ts';
import { PlatformError } from '../core/errors/index.ts';
import { SUBJECTS } from '../core/subjects/index.ts';
import type { BindingTarget, ToolEntry, ToolResult, ToolSource } from '../tools/index.ts';
import { checkWorkflow } from './workflow-definition.ts';
import type { WorkflowRuns } from './workflow-runs.ts';

/** How long a workflow tool waits for its run to end or to wait for someone, before it answers with the run as it is. */
export const WORKFLOW_TOOL_WAIT_MS = 60_000;

/** A workflow's tool name: `workflow_{name}`, hyphens as underscores (the rule of plugin tool names). */
export const workflowToolName = (name: string) => `workflow_${name.replaceAll('-', '_')}`;

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The workflows of an account: the operator puts them (the management API has no workflow writes, spec §1), the API
 * reads them and attaches them to agents and gateways, where each attached workflow is a tool (spec §4.2). Changes of
 * attachments are published so every node drops the tool lists it cached.
 */
export function createWorkflows(deps: { store: Pick<Store, 'workflows' | 'agents' | 'gateways'>; bus: Bus; now: () => number; runs: () => WorkflowRuns }) {
  const at = () => new Date(deps.now()).toISOString();
  const changed = (accountId: string) => deps.bus.publish(SUBJECTS.workflowsChanged, { accountId });

  const get = async (accountId: string, ref: string): Promise<WorkflowRecord> => {
    const w = uuid.test(ref) ? await deps.store.workflows.get(accountId, ref) : await deps.store.workflows.byName(accountId, ref);
    if (!w) throw new PlatformError('WORKFLOW_NOT_FOUND', `no workflow ${ref} in this account`);
    return w;
  };
  const targetExists = async (accountId: string, kind: AttachmentTargetKind, id: string) => {
    const found = uuid.test(id) && (kind === 'agent' ? await deps.store.agents.get(accountId, id) : await deps.store.gateways.get(accountId, id));
    if (!found) throw new PlatformError(kind === 'agent' ? 'MGMT_AGENT_NOT_FOUND' : 'MGMT_GATEWAY_NOT_FOUND', `no ${kind} ${id} in this account`);
  };

  return {
    get,
    list: (accountId: string) => deps.store.workflows.list(accountId),
    /** Creates a workflow, or replaces the definition of the one of that name (a new version; runs keep theirs). */
    async put(accountId: string, definition: unknown): Promise<WorkflowRecord> {
      const w = checkWorkflow(definition);
      const record = await deps.store.workflows.put({ accountId, id: randomUUID(), name: w.name, description: w.description, definition: w, at: at() });
      changed(accountId);
      return record;
    },
    async remove(accountId: string, ref: string): Promise<void> {
      const w = await get(accountId, ref);
      await deps.store.workflows.remove(accountId, w.id);
      changed(accountId);
    },
    async attach(accountId: string, by: string, ref: string, kind: AttachmentTargetKind, targetId: string): Promise<boolean> {
      const w = await get(accountId, ref);
      await targetExists(accountId, kind, targetId);
      const added = await deps.store.workflows.attach(accountId, w.id, kind, targetId, at(), by);
      changed(accountId);
      return added;
    },
    async detach(accountId: string, ref: string, kind: AttachmentTargetKind, targetId: string): Promise<boolean> {
      const w = await get(accountId, ref);
      await targetExists(accountId, kind, targetId);
      const removed = await deps.store.workflows.detach(accountId, w.id, kind, targetId);
      changed(accountId);
      return removed;
    },
    async ofTarget(accountId: string, kind: AttachmentTargetKind, targetId: string): Promise<WorkflowRecord[]> {
      await targetExists(accountId, kind, targetId);
      return deps.store.workflows.ofTarget(accountId, kind, targetId);
    },
    /** Attached workflows as tools of their agent or gateway: a call starts a run and answers with how it went. */
    toolSource(): ToolSource {
      return {
        changedOn: [SUBJECTS.workflowsChanged],
        async tools(target: BindingTarget): Promise<ToolEntry[]> {
          const attached = await deps.store.workflows.ofTarget(target.accountId, target.kind, target.id);
          return attached.map((w): ToolEntry => {
            const def = w.definition as WorkflowDefinition;
            return {
              name: workflowToolName(w.name),
              description: `${w.description || `Runs the workflow ${w.name}.`} (A workflow: the answer is its run — completed with its output, failed with why, or waiting for an approval or a signal, with the run id to follow.)`,
              inputSchema: def.input ?? { type: 'object' },
              readOnly: false,
              requiresAnchor: false,
              origin: { kind: 'workflow', workflowId: w.id },
              async invoke(caller, args, opts): Promise<ToolResult> {
                try {
                  const started = await deps.runs().start(caller, w.id, args ?? {}, { kind: target.kind, id: target.id });
                  const r = await deps.runs().settle(target.accountId, started.id, WORKFLOW_TOOL_WAIT_MS, opts.signal);
                  const value = { run_id: r.id, status: r.status, step: r.currentStep, ...(r.output !== null ? { output: r.output } : {}), ...(r.error ? { error: r.error } : {}), ...(r.waitingFor ? { waiting_for: r.waitingFor } : {}) };
                  return r.status === 'failed' ? { isError: true, kind: 'error', message: `the workflow ${w.name} failed: ${r.error ?? 'no reason given'}`, payload: value } : { isError: false, value };
                } catch (err) {
                  return { isError: true, kind: 'error', message: err instanceof Error ? err.message : String(err) };
                }
              },
            };
          });
        },
      };
    },
  };
}

export type Workflows = ReturnType<typeof createWorkflows>;
