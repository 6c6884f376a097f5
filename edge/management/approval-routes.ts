import { decodeKeyset, encodeKeyset } from './keyset.ts';
import { hasAuthority, PlatformError, type Caller, type DecisionRejection, type Services } from '../../runtime/index.ts';
import type { ApprovalGateRow } from '../../store/index.ts';
import { requireAuthority, type AuthServices } from './auth.ts';
import { BAD_PATH, CREDENTIAL, errorResponses } from './openapi.ts';
import { DEFAULT_LIMIT, GateDecided, GateDecisionBody, GateList, GateListQuery, GatePath, OneGate, type GateWire, type ManagementApp } from './schemas.ts';

const toWire = (g: ApprovalGateRow): GateWire => ({
  id: g.id,
  state: g.state,
  agent_id: g.agentId,
  task_id: g.taskId,
  context_id: g.contextId,
  workflow_run_id: g.workflowRunId,
  owner_id: g.ownerId,
  tool: g.tool,
  tool_call_id: g.toolCallId,
  arguments: g.arguments,
  arguments_hash: g.argumentsHash,
  opened_at: g.openedAt,
  expires_at: g.expiresAt,
  decided_at: g.decidedAt,
  decided_by: g.decidedBy,
});

/** Admins and owners see (and decide) every gate of the account; anyone else only the gates of their own runs. */
const seesAll = (c: Caller) => hasAuthority(c.role, 'write');
const visible = (c: Caller, g: ApprovalGateRow) => seesAll(c) || g.ownerId === c.principalId;

const cursorOf = (g: ApprovalGateRow) => encodeKeyset(g.openedAt, g.id);
const readCursor = (cursor: string) => {
  const k = decodeKeyset(cursor);
  return { openedAt: k.at, id: k.id };
};

const WHY: Record<DecisionRejection, string> = {
  user_required: 'only a user may decide an approval gate',
  arguments_mismatch: 'arguments_hash names other arguments than the call waiting for approval',
  unknown_gate: 'no such gate',
  already_decided: 'the gate was decided already (a gate is single use)',
  expired: 'the gate expired before the decision arrived',
};

/**
 * Approval gates over the management API (spec §1): list those pending for a thread, a workflow run or the whole
 * account, read one, submit a decision — the same decision an A2A client sends as a `platform.gate_decision` part.
 */
export function approvalRoutes(app: ManagementApp, services: AuthServices & Pick<Services, 'gates'>) {
  const found = async (c: Caller, id: string) => {
    const g = await services.gates.get(c.accountId, id);
    if (!g || !visible(c, g)) throw new PlatformError('MGMT_GATE_NOT_FOUND', `no approval gate ${id} visible to this caller`);
    return g;
  };

  app.get(
    '/v1/approval-gates',
    {
      onRequest: requireAuthority(services, 'read'),
      schema: {
        operationId: 'listApprovalGates',
        tags: ['approval-gates'],
        summary: 'List approval gates',
        description: 'Pending gates (or those in `state`) of the account, a thread (`context_id`) or a workflow run, the longest waiting first. Admins and owners see every gate; other callers the gates of their own runs.',
        security: CREDENTIAL,
        querystring: GateListQuery,
        response: { 200: GateList, ...errorResponses([400, 403, 500, 503]) },
      },
    },
    async (request) => {
      const c = request.caller!;
      const { context_id, workflow_run_id, state, limit = DEFAULT_LIMIT, cursor } = request.query;
      const rows = await services.gates.list(c.accountId, {
        limit: limit + 1,
        ...(state ? { state } : {}),
        ...(context_id !== undefined ? { contextId: context_id } : {}),
        ...(workflow_run_id !== undefined ? { workflowRunId: workflow_run_id } : {}),
        ...(cursor ? { after: readCursor(cursor) } : {}),
        ...(seesAll(c) ? {} : { ownerId: c.principalId }),
      });
      const page = rows.slice(0, limit);
      return { data: { gates: page.map(toWire), next_cursor: rows.length > limit ? cursorOf(page.at(-1)!) : null } };
    },
  );

  app.get(
    '/v1/approval-gates/:id',
    {
      onRequest: requireAuthority(services, 'read'),
      config: { malformedPath: 'MGMT_GATE_NOT_FOUND' },
      schema: {
        operationId: 'getApprovalGate',
        tags: ['approval-gates'],
        summary: 'Read one approval gate',
        security: CREDENTIAL,
        params: GatePath,
        response: { 200: OneGate, ...errorResponses([400, 403, 404, 500, 503], BAD_PATH) },
      },
    },
    async (request) => ({ data: toWire(await found(request.caller!, request.params.id)) }),
  );

  app.post(
    '/v1/approval-gates/:id/decision',
    {
      onRequest: requireAuthority(services, 'execute'),
      config: { malformedPath: 'MGMT_GATE_NOT_FOUND' },
      schema: {
        operationId: 'decideApprovalGate',
        tags: ['approval-gates'],
        summary: 'Approve or deny a pending call',
        description:
          'A user decides a pending gate of their own run (admins and owners: of any run of the account), for the arguments it shows (`arguments_hash`). The gate is single use; the run resumes at once. A decision that changes nothing is 409 `MGMT_GATE_DECISION_REJECTED` with the reason.',
        security: CREDENTIAL,
        params: GatePath,
        body: GateDecisionBody,
        response: { 200: GateDecided, ...errorResponses([400, 403, 404, 409, 500, 503], BAD_PATH) },
      },
    },
    async (request) => {
      const c = request.caller!;
      if (c.kind !== 'user') throw new PlatformError('MGMT_USER_REQUIRED', 'only a user may decide an approval gate; this credential belongs to a service principal');
      const g = await found(c, request.params.id);
      const r = await services.gates.decide({ accountId: c.accountId, gateId: g.id, decision: request.body.decision, argumentsHash: request.body.arguments_hash, by: { principalId: c.principalId, kind: c.kind } });
      if ('rejected' in r) throw new PlatformError('MGMT_GATE_DECISION_REJECTED', `the decision was not taken: ${WHY[r.rejected]} (${r.rejected})`);
      return { data: { outcome: r.outcome as 'approved' | 'denied', gate: toWire((await services.gates.get(c.accountId, g.id)) ?? g) } };
    },
  );
}
