import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  workflowRunAddressOf,
  type OpenGateInput,
  type OpenGateOutput,
  type RunEndedInput,
  type RunEndedOutput,
  type RunTarget,
  type RunToolInput,
  type RunToolOutput,
  type TaskCaller,
  type WorkflowDefinition,
  type WorkflowRunContext,
  type WorkflowRunEmitted,
  type WorkflowRunInput,
} from '../../actors/index.ts';
import { runRowWrite, type RunStatus, type Store, type WorkflowRunRow } from '../../store/index.ts';
import type { ActorSystem, EffectContext, RowProjection } from '../core/actor-host/index.ts';
import { isPlatformError, PlatformError } from '../core/errors/index.ts';
import { callerSnapshot, hasAuthority, type Caller } from '../identity/index.ts';
import { workspaceAnchor, type AutonomyPolicy, type ToolRegistry } from '../tools/index.ts';
import type { ApprovalGates } from '../approvals/index.ts';
import { callsTools, checkInput, WORKFLOW_LIMITS } from './workflow-definition.ts';

/**
 * A tool result a run keeps (in its snapshot, written whole at every turn, and its row) is at most this much JSON;
 * more is kept as truncated text. With at most 100 steps, a run's snapshot stays within a couple of MiB.
 */
export const MAX_STEP_RESULT_BYTES = 16 * 1024;

const iso = (ms: number) => new Date(ms).toISOString();
const toCaller = (accountId: string, c: TaskCaller): Caller => ({ accountId, principalId: c.principalId, kind: c.kind as Caller['kind'], role: c.role as Caller['role'], via: c.via as Caller['via'], ...(c.actors?.length ? { actors: c.actors } : {}) });

function bounded(value: unknown): unknown {
  const text = JSON.stringify(value ?? null);
  return Buffer.byteLength(text) <= MAX_STEP_RESULT_BYTES ? (value ?? null) : { truncated: true, text: text.slice(0, MAX_STEP_RESULT_BYTES / 2) };
}

/** A run's row, from its actor's state (the projection written in each of its turns). */
export const workflowRunProjection: RowProjection = ({ after }) => {
  const c = after.context as unknown as WorkflowRunContext;
  return runRowWrite({
    accountId: c.accountId,
    id: c.runId,
    workflowId: c.workflowId,
    workflowName: c.workflow.name,
    ownerId: c.caller.principalId,
    targetKind: c.target?.kind ?? null,
    targetId: c.target?.id ?? null,
    status: c.status,
    currentStep: c.current,
    waitingFor: c.waitingFor,
    input: c.input ?? null,
    output: c.output ?? null,
    error: c.error,
    steps: c.transitions,
    createdAt: c.at,
    updatedAt: c.updatedAt,
  });
};

export interface WorkflowRunsDeps {
  store: Pick<Store, 'workflows' | 'agents' | 'gateways'>;
  actors: () => ActorSystem;
  tools: Pick<ToolRegistry, 'visible'>;
  policy: AutonomyPolicy;
  gates: Pick<ApprovalGates, 'open' | 'decide' | 'get'>;
  now: () => number;
  /** What waits on a run's end (agents' workflow triggers, built with schedules after this feature). */
  onRunEnded?: (e: RunEndedInput, signal: AbortSignal) => Promise<RunEndedOutput>;
}

const notFound = (id: string) => new PlatformError('WORKFLOW_RUN_NOT_FOUND', `no workflow run ${id} visible to this caller`);

/**
 * Workflow runs (spec §1: start, read status, cancel, approve, signal): WorkflowRun actors, their two effects (a tool
 * step through the tool registry of the run's agent or gateway, with the starting caller's authority and the account's
 * autonomy policy; an approval step as an ApprovalGate), and what the management API and the workflow tools call.
 */
export function createWorkflowRuns(deps: WorkflowRunsDeps) {
  const visible = (c: Caller, r: WorkflowRunRow) => hasAuthority(c.role, 'write') || r.ownerId === c.principalId;
  const found = async (c: Caller, id: string) => {
    const r = await deps.store.workflows.getRun(c.accountId, id);
    if (!r || !visible(c, r)) throw notFound(id);
    return r;
  };

  async function runTool(input: RunToolInput, ctx: EffectContext): Promise<RunToolOutput> {
    const at = () => iso(deps.now());
    if (!input.target) return { ok: false, error: 'the run has no agent or gateway whose tools it could call', at: at() };
    const caller = toCaller(input.accountId, input.caller);
    const target = { kind: input.target.kind, id: input.target.id, accountId: input.accountId };
    const entry = (await deps.tools.visible(target, caller)).find((t) => t.name === input.tool);
    if (!entry) return { ok: false, error: `no tool ${input.tool} is bound to the run's ${input.target.kind}`, at: at() };
    const decision = await deps.policy.evaluate(caller, entry, input.arguments, target);
    if (decision.decision === 'deny') return { ok: false, error: `the call was refused: ${decision.reason}`, at: at() };
    if (decision.decision === 'ask') return { ok: false, error: `the call needs a person's approval (${decision.reason}): put an approval step before it`, at: at() };
    const r = await entry.invoke(caller, input.arguments, { anchor: workspaceAnchor(input.target.kind, input.target.id, caller.principalId), signal: ctx.signal });
    return r.isError ? { ok: false, error: r.message, at: at() } : { ok: true, result: bounded(r.value), at: at() };
  }

  async function openGate(input: OpenGateInput): Promise<OpenGateOutput> {
    const address = workflowRunAddressOf(input.accountId, input.runId);
    const gate = await deps.gates.open({
      accountId: input.accountId,
      agentId: null,
      workflowRunId: input.runId,
      taskId: input.runId,
      contextId: input.runId,
      taskAddress: address,
      ownerId: input.ownerId,
      step: input.transition,
      tool: `workflow:${input.workflowName}/${input.stepId}`,
      toolCallId: input.stepId,
      arguments: { summary: input.summary, arguments: input.arguments },
      reason: input.summary,
    });
    return { gateId: gate.gateId, at: iso(deps.now()) };
  }

  return {
    effects: { runTool, openGate, runEnded: (input: RunEndedInput, ctx: EffectContext): Promise<RunEndedOutput> => (deps.onRunEnded ? deps.onRunEnded(input, ctx.signal) : Promise.resolve({ started: 0 })) },

    /** Starts a run of a workflow for `caller` (execute authority), on the agent or gateway whose tools it calls. */
    async start(caller: Caller, workflowId: string, input: unknown, target: RunTarget | null): Promise<WorkflowRunRow> {
      if (!hasAuthority(caller.role, 'execute')) throw new PlatformError('MGMT_FORBIDDEN', `forbidden: the ${caller.role} role lacks execute authority`);
      const w = await deps.store.workflows.get(caller.accountId, workflowId);
      if (!w) throw new PlatformError('WORKFLOW_NOT_FOUND', `no workflow ${workflowId} in this account`);
      const definition = w.definition as WorkflowDefinition;
      checkInput(definition, input ?? null);
      if (target) {
        const exists = target.kind === 'agent' ? await deps.store.agents.get(caller.accountId, target.id) : await deps.store.gateways.get(caller.accountId, target.id);
        if (!exists) throw new PlatformError('MGMT_AGENT_NOT_FOUND', `no ${target.kind} ${target.id} in this account`);
      } else if (callsTools(definition)) {
        throw new PlatformError('WORKFLOW_TARGET_REQUIRED', `workflow ${w.name} calls tools: start it with agent_id or gateway_id, whose tools its steps call`);
      }
      const runId = randomUUID();
      const runInput: WorkflowRunInput = { accountId: caller.accountId, runId, workflowId: w.id, workflow: definition, input: input ?? null, target, caller: callerSnapshot(caller), at: iso(deps.now()), maxTransitions: WORKFLOW_LIMITS.transitions };
      await deps.actors().create(workflowRunAddressOf(caller.accountId, runId), runInput);
      return (await deps.store.workflows.getRun(caller.accountId, runId))!;
    },

    get: found,
    list: (c: Caller, q: { workflowId?: string; status?: RunStatus; limit: number; before?: { createdAt: string; id: string } }) =>
      deps.store.workflows.listRuns(c.accountId, { ...q, ...(hasAuthority(c.role, 'write') ? {} : { ownerId: c.principalId }) }),

    /** Cancels a run that has not ended (its owner, or an admin or owner of the account). */
    async cancel(c: Caller, id: string): Promise<WorkflowRunRow> {
      const r = await found(c, id);
      if (r.status === 'completed' || r.status === 'failed' || r.status === 'canceled') throw new PlatformError('WORKFLOW_RUN_ENDED', `run ${id} has ended (${r.status})`);
      await send(c.accountId, id, { type: 'CANCEL', at: iso(deps.now()), by: c.principalId });
      return (await deps.store.workflows.getRun(c.accountId, id))!;
    },

    /** A user decides the approval step the run waits on. */
    async approve(c: Caller, id: string, decision: 'approve' | 'deny'): Promise<WorkflowRunRow> {
      if (c.kind !== 'user') throw new PlatformError('MGMT_USER_REQUIRED', 'only a user may decide an approval step; this credential belongs to a service principal');
      const r = await found(c, id);
      const waiting = r.waitingFor as { kind?: string; gateId?: string } | null;
      if (r.status !== 'waiting' || waiting?.kind !== 'approval' || !waiting.gateId) throw new PlatformError('WORKFLOW_NOT_WAITING', `run ${id} is not waiting for an approval (${r.status}${waiting?.kind ? `, waiting for a ${waiting.kind}` : ''})`);
      const gate = await deps.gates.get(c.accountId, waiting.gateId);
      const result = await deps.gates.decide({ accountId: c.accountId, gateId: waiting.gateId, decision, argumentsHash: gate?.argumentsHash ?? '', by: { principalId: c.principalId, kind: c.kind } });
      if ('rejected' in result) throw new PlatformError('WORKFLOW_NOT_WAITING', `the decision was not taken: ${result.rejected}`);
      return (await deps.store.workflows.getRun(c.accountId, id))!;
    },

    /** Sends a signal; refused unless the run waits for that signal now. */
    async signal(c: Caller, id: string, signal: string, payload: unknown): Promise<WorkflowRunRow> {
      if (!hasAuthority(c.role, 'execute')) throw new PlatformError('MGMT_FORBIDDEN', `forbidden: the ${c.role} role lacks execute authority`);
      const r = await found(c, id);
      const turn = await send(c.accountId, id, { type: 'SIGNAL', signal, payload: payload ?? null, at: iso(deps.now()), by: c.principalId });
      const reply = turn?.replies[0] as Extract<WorkflowRunEmitted, { type: 'reply.signal' }> | undefined;
      if (!reply?.accepted) throw new PlatformError('WORKFLOW_NOT_WAITING', `run ${id} is not waiting for signal ${JSON.stringify(signal)}${reply?.waitingFor ? ` (it waits for ${reply.waitingFor})` : ` (${r.status})`}`);
      return (await deps.store.workflows.getRun(c.accountId, id))!;
    },

    /** The run's row once it stops running (it waits or ended), or as it is after `ms`. */
    async settle(accountId: string, id: string, ms: number, signal?: AbortSignal): Promise<WorkflowRunRow> {
      const until = deps.now() + ms;
      let pause = 20;
      for (;;) {
        const r = await deps.store.workflows.getRun(accountId, id);
        if (!r) throw notFound(id);
        if (r.status !== 'running' || deps.now() >= until || signal?.aborted) return r;
        await sleep(pause);
        pause = Math.min(pause * 2, 500);
      }
    },
  };

  async function send(accountId: string, id: string, event: { type: string } & Record<string, unknown>) {
    try {
      return await deps.actors().ask(workflowRunAddressOf(accountId, id), event);
    } catch (err) {
      if (isPlatformError(err, 'PLT_ACTOR_NOT_FOUND')) throw new PlatformError('WORKFLOW_RUN_ENDED', `run ${id} has ended`);
      throw err;
    }
  }
}

export type WorkflowRuns = ReturnType<typeof createWorkflowRuns>;
