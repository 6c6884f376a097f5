import { decodeKeyset, encodeKeyset } from './keyset.ts';
import { PlatformError, WORKFLOW_LIMITS, type Caller, type Services } from '../../runtime/index.ts';
import type { AttachmentTargetKind, WorkflowRecord, WorkflowRunRow } from '../../store/index.ts';
import { requireAuthority, type AuthServices } from './auth.ts';
import { BAD_PATH, CREDENTIAL, errorResponses } from './openapi.ts';
import { DEFAULT_LIMIT, type ManagementApp } from './schemas.ts';
import { HomeAgentPath } from './files-schemas.ts';
import {
  AgentWorkflowPath,
  ApproveBody,
  Attached,
  GatewayPath,
  GatewayWorkflowPath,
  OneRun,
  OneWorkflow,
  RunList,
  RunListQuery,
  RunPath,
  RunStartBody,
  SignalBody,
  WorkflowList,
  WorkflowPath,
  type RunWire,
  type WorkflowWire,
} from './workflow-schemas.ts';

const workflowWire = (w: WorkflowRecord, full = false): WorkflowWire => ({ id: w.id, name: w.name, description: w.description, version: w.version, created_at: w.createdAt, updated_at: w.updatedAt, ...(full ? { definition: w.definition } : {}) });

function runWire(r: WorkflowRunRow): RunWire {
  const w = r.waitingFor as { kind: 'approval' | 'signal' | 'timer'; gateId?: string; signal?: string; until?: number | null } | null;
  return {
    id: r.id,
    workflow_id: r.workflowId,
    workflow_name: r.workflowName,
    owner_id: r.ownerId,
    target: r.targetKind && r.targetId ? { kind: r.targetKind, id: r.targetId } : null,
    status: r.status,
    step: r.currentStep,
    waiting_for: w
      ? { kind: w.kind, ...(w.gateId ? { gate_id: w.gateId } : {}), ...(w.signal ? { signal: w.signal } : {}), ...(w.until !== undefined ? { until: w.until === null ? null : new Date(w.until).toISOString() } : {}) }
      : null,
    input: r.input,
    output: r.output,
    error: r.error,
    steps: r.steps,
    created_at: r.createdAt,
    updated_at: r.updatedAt,
  };
}

const cursorOf = (r: WorkflowRunRow) => encodeKeyset(r.createdAt, r.id);
const readCursor = (cursor: string) => {
  const k = decodeKeyset(cursor);
  return { createdAt: k.at, id: k.id };
};

/**
 * Workflows over the management API (spec §1): read the operator's workflows; attach and detach them on agents and
 * gateways (an attached workflow is a tool there); start runs, read their status, cancel, approve and signal them.
 * The API writes no workflow: the operator does (`platform admin workflow put`).
 */
export function workflowRoutes(app: ManagementApp, services: AuthServices & Pick<Services, 'workflows' | 'workflowRuns'>) {
  const read = requireAuthority(services, 'read');
  const write = requireAuthority(services, 'write');
  const execute = requireAuthority(services, 'execute');
  const wf = { tags: ['workflows'], security: CREDENTIAL };
  const runs = { tags: ['workflow-runs'], security: CREDENTIAL };
  const runPath = { config: { malformedPath: 'WORKFLOW_RUN_NOT_FOUND' as const } };
  const runNotFound = { ...BAD_PATH, 404: 'No such run visible to this caller.' };

  app.get('/v1/workflows', { onRequest: read, schema: { ...wf, operationId: 'listWorkflows', summary: 'List workflows', response: { 200: WorkflowList, ...errorResponses([403, 500, 503]) } } }, async (request) => ({
    data: { workflows: (await services.workflows.list(request.caller!.accountId)).map((w) => workflowWire(w)) },
  }));
  app.get(
    '/v1/workflows/:id',
    { onRequest: read, config: { malformedPath: 'WORKFLOW_NOT_FOUND' }, schema: { ...wf, operationId: 'getWorkflow', summary: 'Read a workflow and its definition', params: WorkflowPath, response: { 200: OneWorkflow, ...errorResponses([400, 403, 404, 500, 503], BAD_PATH) } } },
    async (request) => ({ data: workflowWire(await services.workflows.get(request.caller!.accountId, request.params.id), true) }),
  );

  /** GET the list, PUT and DELETE one attachment, of one kind of target. */
  const attachments = (kind: AttachmentTargetKind, base: string, param: 'agent_id' | 'gateway_id', tag: string) => {
    const notFound = { ...BAD_PATH, 404: `No such ${kind} or workflow in this account.` };
    const config = { malformedPath: (kind === 'agent' ? 'MGMT_AGENT_NOT_FOUND' : 'MGMT_GATEWAY_NOT_FOUND') as 'MGMT_AGENT_NOT_FOUND' };
    const one = kind === 'agent' ? AgentWorkflowPath : GatewayWorkflowPath;
    app.get(`${base}/workflows`, { onRequest: read, config, schema: { tags: [tag], security: CREDENTIAL, operationId: `list${tag === 'agents' ? 'Agent' : 'Gateway'}Workflows`, summary: `The workflows attached to a${kind === 'agent' ? 'n agent' : ' gateway'}`, params: kind === 'agent' ? HomeAgentPath : GatewayPath, response: { 200: WorkflowList, ...errorResponses([400, 403, 404, 500, 503], notFound) } } }, async (request) => {
      const id = (request.params as Record<string, string>)[param]!;
      return { data: { workflows: (await services.workflows.ofTarget(request.caller!.accountId, kind, id)).map((w) => workflowWire(w)) } };
    });
    for (const [method, verb] of [['put', 'attach'], ['delete', 'detach']] as const) {
      app[method](
        `${base}/workflows/:workflow_id`,
        {
          onRequest: write,
          config,
          schema: { tags: [tag], security: CREDENTIAL, operationId: `${verb}${kind === 'agent' ? 'Agent' : 'Gateway'}Workflow`, summary: `${verb === 'attach' ? 'Attach a workflow to' : 'Detach a workflow from'} a${kind === 'agent' ? 'n agent' : ' gateway'}`, description: verb === 'attach' ? `The workflow becomes the tool \`workflow_{name}\` of the ${kind}.` : undefined, params: one, response: { 200: Attached, ...errorResponses([400, 403, 404, 500, 503], notFound) } },
        },
        async (request) => {
          const p = request.params as Record<string, string>;
          const c = request.caller!;
          const changed = verb === 'attach' ? await services.workflows.attach(c.accountId, c.principalId, p.workflow_id!, kind, p[param]!) : await services.workflows.detach(c.accountId, p.workflow_id!, kind, p[param]!);
          return { data: { workflow_id: p.workflow_id!, target: { kind, id: p[param]! }, changed } };
        },
      );
    }
  };
  attachments('agent', '/v1/agents/:agent_id', 'agent_id', 'agents');
  attachments('gateway', '/v1/gateways/:gateway_id', 'gateway_id', 'gateways');

  app.post(
    '/v1/workflow-runs',
    { onRequest: execute, schema: { ...runs, operationId: 'startWorkflowRun', summary: 'Start a workflow run', description: 'A workflow with tool steps needs `agent_id` or `gateway_id`: its steps call that one’s tools, with the caller’s authority and the account’s autonomy policy.', body: RunStartBody, response: { 201: OneRun, ...errorResponses([400, 403, 404, 500, 503]) } } },
    async (request, reply) => {
      const b = request.body;
      if (b.agent_id && b.gateway_id) throw new PlatformError('MGMT_INVALID_BODY', 'malformed request body: give agent_id or gateway_id, not both');
      const target = b.agent_id ? { kind: 'agent' as const, id: b.agent_id } : b.gateway_id ? { kind: 'gateway' as const, id: b.gateway_id } : null;
      const run = await services.workflowRuns.start(request.caller!, b.workflow_id, b.input ?? null, target);
      return reply.code(201).send({ data: runWire(run) });
    },
  );

  app.get('/v1/workflow-runs', { onRequest: read, schema: { ...runs, operationId: 'listWorkflowRuns', summary: 'List workflow runs', querystring: RunListQuery, response: { 200: RunList, ...errorResponses([400, 403, 500, 503]) } } }, async (request) => {
    const { workflow_id, status, limit = DEFAULT_LIMIT, cursor } = request.query;
    const rows = await services.workflowRuns.list(request.caller!, {
      limit: limit + 1,
      ...(workflow_id ? { workflowId: workflow_id } : {}),
      ...(status ? { status: status as WorkflowRunRow['status'] } : {}),
      ...(cursor ? { before: readCursor(cursor) } : {}),
    });
    const page = rows.slice(0, limit);
    return { data: { runs: page.map(runWire), next_cursor: rows.length > limit ? cursorOf(page.at(-1)!) : null } };
  });

  app.get('/v1/workflow-runs/:id', { onRequest: read, ...runPath, schema: { ...runs, operationId: 'getWorkflowRun', summary: "Read a run's status", params: RunPath, response: { 200: OneRun, ...errorResponses([400, 403, 404, 500, 503], runNotFound) } } }, async (request) => ({
    data: runWire(await services.workflowRuns.get(request.caller!, request.params.id)),
  }));

  const act = (path: string, operationId: string, summary: string, description: string, body: typeof ApproveBody | typeof SignalBody | null, run: (c: Caller, id: string, body: any) => Promise<WorkflowRunRow>) =>
    app.post(
      path,
      { onRequest: execute, ...runPath, schema: { ...runs, operationId, summary, description, params: RunPath, ...(body ? { body } : {}), response: { 200: OneRun, ...errorResponses([400, 403, 404, 409, 413, 500, 503], runNotFound) } } },
      async (request) => ({ data: runWire(await run(request.caller!, (request.params as { id: string }).id, request.body)) }),
    );
  act('/v1/workflow-runs/:id/cancel', 'cancelWorkflowRun', 'Cancel a run', 'Its owner, or an admin or owner of the account. A run that ended is 409 `WORKFLOW_RUN_ENDED`.', null, (c, id) => services.workflowRuns.cancel(c, id));
  act('/v1/workflow-runs/:id/approve', 'approveWorkflowRun', 'Decide the approval step a run waits on', 'A user approves or denies; the run goes on at once. A run not waiting for an approval is 409 `WORKFLOW_NOT_WAITING`.', ApproveBody, (c, id, b: { decision: 'approve' | 'deny' }) =>
    services.workflowRuns.approve(c, id, b.decision),
  );
  act('/v1/workflow-runs/:id/signal', 'signalWorkflowRun', 'Signal a run', 'Delivers a signal the run waits for (its `waiting_for.signal`); the payload becomes the step’s `payload`. A run not waiting for it is 409 `WORKFLOW_NOT_WAITING`.', SignalBody, async (c, id, b: { signal: string; payload?: unknown }) => {
    if (Buffer.byteLength(JSON.stringify(b.payload ?? null)) > WORKFLOW_LIMITS.payloadBytes) throw new PlatformError('MGMT_BODY_TOO_LARGE', `a signal's payload is at most ${WORKFLOW_LIMITS.payloadBytes} bytes of JSON`);
    return services.workflowRuns.signal(c, id, b.signal, b.payload);
  });
}
