import type { DecisionRecord, PolicyScope } from '../../store/index.ts';
import { PlatformError, type ErrorCode, type PolicyView, type Services } from '../../runtime/index.ts';
import { requireAuthority, type AuthServices } from './auth.ts';
import { AgentPath, DecisionList, DecisionQuery, DECISIONS_DEFAULT_LIMIT, OnePolicy, PolicyDocumentBody, PrincipalPath } from './autonomy-schemas.ts';
import { BAD_PATH, CREDENTIAL, errorResponses, type ErrorStatus } from './openapi.ts';
import type { ManagementApp } from './schemas.ts';

/**
 * Autonomy (spec §1): read and set the policy of the account, of an agent and of a user, and read the decision
 * history. Reading needs read authority; setting needs write (admins and owners), as every change to what the
 * account hosts does.
 */

const toWirePolicy = (p: PolicyView) => ({
  scope: p.scope,
  subject_id: p.subjectId,
  rules: p.rules,
  version: p.version,
  updated_at: p.updatedAt,
  updated_by: p.updatedBy,
});

const toWireDecision = (d: DecisionRecord) => ({
  id: d.id,
  principal_id: d.principalId,
  tool: d.tool,
  arguments_hash: d.argumentsHash,
  outcome: d.outcome,
  reason: d.reason,
  decided_by: d.decidedBy,
  surface: d.surface,
  target: { kind: d.targetKind, id: d.targetId },
  gate_id: d.gateId,
  created_at: d.createdAt,
});

/** Cursors are the last id of a page, opaque to clients. */
const encodeCursor = (id: string) => Buffer.from(`d${id}`).toString('base64url');
function decodeCursor(cursor: string): string {
  const text = Buffer.from(cursor, 'base64url').toString();
  if (!/^d[1-9][0-9]{0,17}$/.test(text)) throw new PlatformError('MGMT_INVALID_QUERY', 'invalid query parameter: cursor must be a cursor this API issued');
  return text.slice(1);
}

type AutonomyServices = AuthServices & Pick<Services, 'autonomy'>;

/** The GET and PUT of one scope's policy at `path`. */
function policyRoutes(app: ManagementApp, services: AutonomyServices, o: { path: string; scope: PolicyScope; name: string; what: string; params?: typeof AgentPath | typeof PrincipalPath; subject: (params: Record<string, string>) => string }) {
  const notFound: ErrorCode = o.scope === 'agent' ? 'AUTONOMY_UNKNOWN_AGENT' : 'AUTONOMY_UNKNOWN_PRINCIPAL';
  // What both routes of a scope share: the path's parameters, what a bad one answers, the tag and the credential.
  const config = o.params ? { config: { malformedPath: notFound } } : {};
  const shared = { tags: ['autonomy'], security: CREDENTIAL, ...(o.params ? { params: o.params } : {}) };
  const statuses: ErrorStatus[] = o.params ? [400, 403, 404, 500, 503] : [400, 403, 500, 503];
  const putStatuses: ErrorStatus[] = o.params ? [400, 403, 404, 413, 500, 503] : [400, 403, 413, 500, 503];
  const why = o.params ? { ...BAD_PATH, 404: `No such ${o.scope === 'agent' ? 'agent' : 'principal'} in this account.` } : {};
  app.get(
    o.path,
    {
      onRequest: requireAuthority(services, 'read'),
      ...config,
      schema: {
        ...shared,
        operationId: `get${o.name}AutonomyPolicy`,
        summary: `Read the autonomy policy of ${o.what}`,
        description: `The rules that decide ${o.what}'s tool calls (read authority). A policy never set has no rules and version 0.`,
        response: { 200: OnePolicy, ...errorResponses(statuses, why) },
      },
    },
    async (request) => ({ data: toWirePolicy(await services.autonomy.getPolicy(request.caller!.accountId, o.scope, o.subject(request.params as Record<string, string>))) }),
  );
  app.put(
    o.path,
    {
      onRequest: requireAuthority(services, 'write'),
      ...config,
      schema: {
        ...shared,
        operationId: `set${o.name}AutonomyPolicy`,
        summary: `Set the autonomy policy of ${o.what}`,
        description: `Replaces the policy of ${o.what} (write authority: admins and owners). Every node applies it within two seconds; this node at once.`,
        body: PolicyDocumentBody,
        response: { 200: OnePolicy, ...errorResponses(putStatuses, { ...why, 413: 'The policy is larger than 16 KiB as JSON (`AUTONOMY_POLICY_TOO_LARGE`), or the body than the API\'s limit.' }) },
      },
    },
    async (request) => {
      const caller = request.caller!;
      const view = await services.autonomy.setPolicy(caller.accountId, o.scope, o.subject(request.params as Record<string, string>), request.body, caller.principalId);
      return { data: toWirePolicy(view) };
    },
  );
}

export function autonomyRoutes(app: ManagementApp, services: AutonomyServices) {
  policyRoutes(app, services, { path: '/v1/autonomy/policy', scope: 'account', name: 'Account', what: 'the account', subject: () => '' });
  policyRoutes(app, services, { path: '/v1/agents/:agent_id/autonomy', scope: 'agent', name: 'Agent', what: 'an agent', params: AgentPath, subject: (p) => p.agent_id! });
  policyRoutes(app, services, { path: '/v1/autonomy/users/:principal_id', scope: 'user', name: 'User', what: 'a user', params: PrincipalPath, subject: (p) => p.principal_id! });

  app.get(
    '/v1/autonomy/decisions',
    {
      onRequest: requireAuthority(services, 'read'),
      schema: {
        operationId: 'listAutonomyDecisions',
        tags: ['autonomy'],
        summary: 'Read the autonomy decision history',
        description: 'Every decision on a tool call of the account, by policy or by a human at a gate, newest first (read authority). Arguments are shown as their hash only.',
        security: CREDENTIAL,
        querystring: DecisionQuery,
        response: { 200: DecisionList, ...errorResponses([400, 403, 500, 503]) },
      },
    },
    async (request) => {
      const q = request.query;
      const limit = q.limit ?? DECISIONS_DEFAULT_LIMIT;
      const target = q.agent_id !== undefined ? { targetKind: 'agent' as const, targetId: q.agent_id } : q.gateway_id !== undefined ? { targetKind: 'gateway' as const, targetId: q.gateway_id } : {};
      if (q.agent_id !== undefined && q.gateway_id !== undefined) throw new PlatformError('MGMT_INVALID_QUERY', 'invalid query parameter: agent_id and gateway_id cannot be given together');
      const page = await services.autonomy.decisions(
        {
          accountId: request.caller!.accountId,
          ...target,
          ...(q.principal_id !== undefined ? { principalId: q.principal_id } : {}),
          ...(q.tool !== undefined ? { tool: q.tool } : {}),
          ...(q.outcome !== undefined ? { outcome: q.outcome as 'allow' | 'deny' | 'ask' } : {}),
          ...(q.since !== undefined ? { since: q.since } : {}),
          ...(q.cursor !== undefined ? { before: decodeCursor(q.cursor) } : {}),
        },
        limit,
      );
      const last = page.decisions[page.decisions.length - 1];
      return { data: { decisions: page.decisions.map(toWireDecision), next_cursor: page.more && last ? encodeCursor(last.id) : null } };
    },
  );
}
