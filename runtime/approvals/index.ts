export {
  approvalGateProjection,
  createApprovalGates,
  gateMessage,
  GATE_DECISION,
  GATE_DECISION_REJECTED,
  type ApprovalGates,
  type ApprovalGatesDeps,
  type DecisionRejection,
  type GateDecision,
  type GateRequest,
} from './approval-gates.ts';
export { createAutonomy, governingRule, type Autonomy, type AutonomyDeps, type PolicyView, type RecordInput } from './autonomy-policies.ts';
export { argumentsHash, canonicalJson } from './arguments-hash.ts';
export { decisionLog, type DecisionLog } from './decision-log.ts';
export { parsePolicy, holds, judgeArguments, POLICY_LIMITS, POLICY_MODES, CONDITION_OPS, TOOL_NAME, type PolicyDocument, type PolicyRule, type Condition, type ConditionOp, type PolicyMode } from './policy-rules.ts';
