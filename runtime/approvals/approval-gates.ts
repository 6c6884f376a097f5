import { createHash } from 'node:crypto';
import { approvalGateAddressOf, type AgentMessage, type ApprovalGateContext, type ApprovalGateEmitted, type ApprovalGateInput, type GateOutcome, type GateRejection } from '../../actors/index.ts';
import { gateRowWrite, type ApprovalGateRow, type GateListQuery, type Store } from '../../store/index.ts';
import type { ActorSystem, RowProjection } from '../core/actor-host/index.ts';
import { isPlatformError } from '../core/errors/index.ts';
import { argumentsHash } from './arguments-hash.ts';
import type { RecordInput } from './autonomy-policies.ts';

/** The data part key of a gate's request and of a decision (spec §4.3, §6). */
export const GATE_DECISION = 'platform.gate_decision';
/** The data part key of the answer to a decision that changed nothing. */
export const GATE_DECISION_REJECTED = 'platform.gate_decision_rejected';

/** Why a decision was not taken: the gate's own reasons, or the gate is not (or no longer) waiting. */
export type DecisionRejection = GateRejection | 'unknown_gate' | 'already_decided' | 'expired';

/** A gate's id: derived from its task, step and call, so a tool round run again opens the same gate, not a second. */
function gateIdOf(taskAddress: string, step: number, toolCallId: string): string {
  const h = createHash('sha256').update(`${taskAddress}\n${step}\n${toolCallId}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

/** The row of a gate, from its actor's state: the management API's list, and the answer once the actor is gone. */
export const approvalGateProjection: RowProjection = ({ after }) => {
  const c = after.context as unknown as ApprovalGateContext;
  return gateRowWrite({
    accountId: c.accountId,
    id: c.gateId,
    agentId: c.agentId,
    workflowRunId: c.workflowRunId ?? null,
    taskId: c.taskId,
    contextId: c.contextId,
    ownerId: c.ownerId,
    tool: c.tool,
    toolCallId: c.toolCallId,
    arguments: c.arguments,
    argumentsHash: c.argumentsHash,
    state: c.decision?.outcome ?? 'pending',
    openedAt: c.openedAt,
    expiresAt: new Date(c.expiresAt).toISOString(),
    decidedAt: c.decision?.at ?? null,
    decidedBy: c.decision?.by ?? null,
  });
};

/** What the agent loop asks a gate for: the call and its task; the gate adds its id, the hash and its times. */
export type GateRequest = Omit<ApprovalGateInput, 'gateId' | 'argumentsHash' | 'openedAt' | 'expiresAt'> & { step: number; reason: string };

export interface ApprovalGatesDeps {
  store: Pick<Store, 'approvalGates'>;
  /** Bound after start-up: the host exists after the steps that open gates. */
  actors: () => Pick<ActorSystem, 'create' | 'ask'>;
  now: () => number;
  ttlMs: number;
  /** Records a human's decision beside the policy's (the autonomy decision history). */
  record: (d: RecordInput) => void;
}

/** The input-required message of a gate: what the agent wants to run, and the data part a client decides with. */
export function gateMessage(g: ApprovalGateInput, reason: string): AgentMessage {
  return {
    messageId: `${g.taskId}:gate-${g.gateId}`,
    role: 'ROLE_AGENT',
    contextId: g.contextId,
    taskId: g.taskId,
    parts: [
      { text: `Approval needed: the agent wants to call ${g.tool} with ${JSON.stringify(g.arguments ?? {})} (${reason}). Approve or deny it before ${new Date(g.expiresAt).toISOString()}.` },
      {
        data: {
          [GATE_DECISION]: { gateId: g.gateId, tool: g.tool, toolCallId: g.toolCallId, arguments: g.arguments ?? {}, argumentsHash: g.argumentsHash, expiresAt: new Date(g.expiresAt).toISOString(), decisions: ['approve', 'deny'] },
        },
        mediaType: 'application/json',
      },
    ],
  };
}

/** A human's decision on a gate. */
export interface GateDecision {
  accountId: string;
  gateId: string;
  decision: 'approve' | 'deny';
  argumentsHash: string;
  by: { principalId: string; kind: string };
}

/**
 * Approval gates as the runtime uses them: the agent loop opens one for a call that needs a human, the agent gateway
 * and the management API submit decisions, the management API lists them. A gate is an ApprovalGate actor (on its
 * shard, wherever the decision arrives) with its row as projection.
 */
export function createApprovalGates(deps: ApprovalGatesDeps) {
  return {
    /** Opens (or finds again) the gate of one call; its id and the task's input-required message. */
    async open(req: GateRequest): Promise<{ gateId: string; message: AgentMessage }> {
      const gateId = gateIdOf(req.taskAddress, req.step, req.toolCallId);
      const now = deps.now();
      const input: ApprovalGateInput = {
        gateId,
        accountId: req.accountId,
        agentId: req.agentId,
        ...(req.workflowRunId ? { workflowRunId: req.workflowRunId } : {}),
        taskId: req.taskId,
        contextId: req.contextId,
        taskAddress: req.taskAddress,
        ownerId: req.ownerId,
        tool: req.tool,
        toolCallId: req.toolCallId,
        arguments: req.arguments ?? {},
        argumentsHash: argumentsHash(req.arguments),
        openedAt: new Date(now).toISOString(),
        expiresAt: now + deps.ttlMs,
      };
      try {
        await deps.actors().create(approvalGateAddressOf(req.accountId, gateId), input);
      } catch (err) {
        // The round ran again (a restart): its gate is open already, or decided and gone (the task hears of it).
        if (!isPlatformError(err, 'PLT_ACTOR_EXISTS')) throw err;
        const row = await deps.store.approvalGates.get(req.accountId, gateId);
        if (row) return { gateId, message: gateMessage({ ...input, openedAt: row.openedAt, expiresAt: Date.parse(row.expiresAt) }, req.reason) };
      }
      return { gateId, message: gateMessage(input, req.reason) };
    },

    /** Submits a decision: its outcome, or why it changed nothing. */
    async decide(d: GateDecision): Promise<{ outcome: GateOutcome } | { rejected: DecisionRejection }> {
      const event = { type: 'DECIDE', decision: d.decision, by: d.by.principalId, byKind: d.by.kind, argumentsHash: d.argumentsHash, at: new Date(deps.now()).toISOString() };
      try {
        const r = await deps.actors().ask(approvalGateAddressOf(d.accountId, d.gateId), event);
        const reply = r.replies[0] as ApprovalGateEmitted | undefined;
        if (reply?.type === 'reply.decided') {
          const allowed = reply.outcome === 'approved';
          // A tool call's decision joins the autonomy record; an approval step of a workflow run is the run's own record.
          if (reply.agentId !== null) {
            deps.record({ accountId: d.accountId, principalId: d.by.principalId, tool: reply.tool, argumentsHash: reply.argumentsHash, outcome: allowed ? 'allow' : 'deny', reason: allowed ? 'approved by a person' : 'denied by a person', decidedBy: 'human', target: { kind: 'agent', id: reply.agentId }, gateId: d.gateId });
          }
          return { outcome: reply.outcome };
        }
        if (reply?.type === 'reply.rejected') return { rejected: reply.reason };
      } catch (err) {
        if (!isPlatformError(err, 'PLT_ACTOR_NOT_FOUND')) throw err;
      }
      // The gate ended (single use) or never was: its row says which.
      const row = await deps.store.approvalGates.get(d.accountId, d.gateId);
      if (!row) return { rejected: 'unknown_gate' };
      return { rejected: row.state === 'expired' ? 'expired' : 'already_decided' };
    },

    get: (accountId: string, gateId: string): Promise<ApprovalGateRow | null> => deps.store.approvalGates.get(accountId, gateId),
    list: (accountId: string, q: GateListQuery): Promise<ApprovalGateRow[]> => deps.store.approvalGates.list(accountId, q),
  };
}

export type ApprovalGates = ReturnType<typeof createApprovalGates>;
