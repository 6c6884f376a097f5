import type { ApprovalGates, DecisionRejection } from '../approvals/index.ts';
import { GATE_DECISION, GATE_DECISION_REJECTED } from '../approvals/index.ts';
import { PlatformError } from '../core/errors/index.ts';
import type { A2aCaller, A2aMessage, A2aSendParams } from './a2a-shapes.ts';

/** A decision as a client sends it: the data part `platform.gate_decision` of a SendMessage (spec §4.3). */
export interface GateDecisionPart {
  gateId: string;
  decision: 'approve' | 'deny';
  argumentsHash: string;
}

/** The decision a message carries, or null when it is an ordinary message; a malformed decision is -32602. */
export function gateDecisionOf(message: A2aMessage): GateDecisionPart | null {
  const part = message.parts.find((p) => p.data && typeof p.data === 'object' && !Array.isArray(p.data) && GATE_DECISION in (p.data as object));
  if (!part) return null;
  const d = (part.data as Record<string, unknown>)[GATE_DECISION] as Record<string, unknown> | null;
  const bad = (why: string) => new PlatformError('A2A_INVALID_PARAMS', `message.parts: the ${GATE_DECISION} data part ${why}`);
  if (!d || typeof d !== 'object' || Array.isArray(d)) throw bad('must be an object {gateId, decision, argumentsHash}');
  if (typeof d.gateId !== 'string' || !d.gateId || d.gateId.length > 128) throw bad('needs gateId (the gate of the input-required message)');
  if (d.decision !== 'approve' && d.decision !== 'deny') throw bad('needs decision "approve" or "deny"');
  if (typeof d.argumentsHash !== 'string' || !d.argumentsHash || d.argumentsHash.length > 128) throw bad('needs argumentsHash (as the gate gave it: the decision is bound to those arguments)');
  if (message.parts.length !== 1) throw bad('must be the message\'s only part');
  if (!message.taskId || !message.contextId) throw new PlatformError('A2A_INVALID_PARAMS', `message: a gate decision needs both taskId and contextId (spec §4.3)`);
  return { gateId: d.gateId, decision: d.decision, argumentsHash: d.argumentsHash };
}

const REASONS: Record<DecisionRejection, string> = {
  user_required: 'only a user may decide an approval gate',
  arguments_mismatch: 'the decision names other arguments than the call waiting for approval',
  unknown_gate: 'this task is not waiting on that gate',
  already_decided: 'the gate was decided already (a gate is single use)',
  expired: 'the gate expired before the decision arrived',
};

/** The agent's answer to a decision that changed nothing: the task stays input-required (spec §3). */
export function rejectionMessage(params: A2aSendParams, gateId: string, reason: DecisionRejection): A2aMessage {
  return {
    messageId: `${params.message.messageId}:rejected`,
    role: 'ROLE_AGENT',
    taskId: params.message.taskId!,
    contextId: params.message.contextId!,
    parts: [{ text: `The decision was not taken: ${REASONS[reason]}.` }, { data: { [GATE_DECISION_REJECTED]: { gateId, reason } }, mediaType: 'application/json' }],
  };
}

/**
 * Submits a decision sent over A2A for the caller's own task (one it can see; others look like none): the gate must
 * be the one this task waits on, and the caller a user. Null when the gate took it (the run resumes).
 */
export async function submitDecision(
  deps: { gates: Pick<ApprovalGates, 'get' | 'decide'> },
  c: A2aCaller,
  task: { id: string; contextId: string },
  d: GateDecisionPart,
): Promise<DecisionRejection | null> {
  if (c.principalKind !== 'user') return 'user_required';
  const gate = await deps.gates.get(c.accountId, d.gateId);
  if (!gate || gate.agentId !== c.agentId || gate.taskId !== task.id || gate.contextId !== task.contextId) return 'unknown_gate';
  const r = await deps.gates.decide({ accountId: c.accountId, gateId: d.gateId, decision: d.decision, argumentsHash: d.argumentsHash, by: { principalId: c.principalId, kind: c.principalKind } });
  return 'rejected' in r ? r.rejected : null;
}
