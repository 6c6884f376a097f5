import { Type, type Static } from 'typebox';
import { WORKFLOW_LIMITS } from '../../runtime/index.ts';
import { component, data, DEFAULT_LIMIT, MAX_LIMIT, Text, Timestamp, Uuid } from './schemas.ts';
import { PATTERNS } from './validation.ts';

/** Wire shapes of the workflow routes (spec §1 Workflow runs, agents' and gateways' workflows; docs/workflows.md). */

const Nullable = <T extends ReturnType<typeof Type.String> | ReturnType<typeof Type.Unknown>>(t: T) => Type.Union([t, Type.Null()]);

const WorkflowSchema = Type.Object(
  {
    id: Uuid('The workflow id.'),
    name: Type.String(),
    description: Type.String(),
    version: Type.Integer({ minimum: 1, description: 'Counts the times the operator put it.' }),
    created_at: Timestamp('When it was created'),
    updated_at: Timestamp('When its definition last changed'),
    definition: Type.Optional(Type.Unknown({ description: 'The statechart of steps (docs/workflows.md); in a single read.' })),
  },
  { $id: 'Workflow', description: 'A statechart of steps the operator created.' },
);
export type WorkflowWire = Static<typeof WorkflowSchema>;

const WaitingFor = Type.Object({
  kind: Type.String({ enum: ['approval', 'signal', 'timer'] }),
  gate_id: Type.Optional(Type.String({ description: 'The approval gate (kind approval).' })),
  signal: Type.Optional(Type.String({ description: 'The signal it waits for (kind signal).' })),
  until: Type.Optional(Nullable(Type.String({ format: 'date-time', description: 'When the timer fires, or the signal wait times out.' }))),
});

const RunSchema = Type.Object(
  {
    id: Type.String({ description: 'The run id.' }),
    workflow_id: Type.String(),
    workflow_name: Type.String(),
    owner_id: Type.String({ description: 'Who started it: its steps run with this principal’s authority.' }),
    target: Type.Union([Type.Object({ kind: Type.String({ enum: ['agent', 'gateway'] }), id: Type.String() }), Type.Null()], { description: 'Whose tools its tool steps call.' }),
    status: Type.String({ enum: ['running', 'waiting', 'completed', 'failed', 'canceled'] }),
    step: Type.String({ description: 'The step it is at (or ended on).' }),
    waiting_for: Type.Union([WaitingFor, Type.Null()]),
    input: Type.Unknown(),
    output: Type.Unknown({ description: 'What the succeed step gave, once completed.' }),
    error: Nullable(Type.String({ description: 'Why it failed or was canceled.' })),
    steps: Type.Integer({ minimum: 0, description: 'Steps taken so far.' }),
    created_at: Timestamp('When it started'),
    updated_at: Timestamp('When it last moved'),
  },
  { $id: 'WorkflowRun', description: 'One run of a workflow: a WorkflowRun actor.' },
);
export type RunWire = Static<typeof RunSchema>;

export const WorkflowList = data(Type.Object({ workflows: Type.Array(component(WorkflowSchema)) }), 'Workflows, by name.');
export const OneWorkflow = data(component(WorkflowSchema), 'The workflow, with its definition.');
export const WorkflowPath = Type.Object({ id: Uuid('The workflow id.') });
export const AgentWorkflowPath = Type.Object({ agent_id: Uuid('The agent id.'), workflow_id: Uuid('The workflow id.') });
export const GatewayWorkflowPath = Type.Object({ gateway_id: Uuid('The gateway id.'), workflow_id: Uuid('The workflow id.') });
export const GatewayPath = Type.Object({ gateway_id: Uuid('The gateway id.') });
export const Attached = data(Type.Object({ workflow_id: Type.String(), target: Type.Object({ kind: Type.String(), id: Type.String() }), changed: Type.Boolean({ description: 'False when it was so already.' }) }), 'The attachment as it now is.');

export const RunStartBody = Type.Object(
  {
    workflow_id: Uuid('The workflow to run.'),
    input: Type.Optional(Type.Unknown({ description: `The run's input (at most ${WORKFLOW_LIMITS.inputBytes} bytes of JSON), checked against the workflow's input schema.` })),
    agent_id: Type.Optional(Uuid('Run its tool steps with the tools of this agent.')),
    gateway_id: Type.Optional(Uuid('Run its tool steps with the tools of this gateway.')),
  },
  { additionalProperties: false },
);
export const RunPath = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100, pattern: PATTERNS.noNul.pattern, description: 'The run id.' }) });
export const RunListQuery = Type.Object({
  workflow_id: Type.Optional(Uuid('Only runs of this workflow.')),
  status: Type.Optional(Type.String({ enum: ['running', 'waiting', 'completed', 'failed', 'canceled'] })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT, description: 'Page size.' })),
  cursor: Type.Optional(Text(300, 'Where the previous page ended (its `next_cursor`).')),
});
export const RunList = data(Type.Object({ runs: Type.Array(component(RunSchema)), next_cursor: Nullable(Type.String()) }), 'Runs, newest first: every one for admins and owners, their own for anyone else.');
export const OneRun = data(component(RunSchema), 'The run.');
export const ApproveBody = Type.Object({ decision: Type.Enum(['approve', 'deny'] as const, { description: 'What the human decided.' }) }, { additionalProperties: false });
export const SignalBody = Type.Object(
  { signal: Type.String({ minLength: 1, maxLength: 64, pattern: PATTERNS.noNul.pattern, description: 'The signal the run waits for.' }), payload: Type.Optional(Type.Unknown({ description: 'Data the run keeps as the step’s payload.' })) },
  { additionalProperties: false },
);

export const WORKFLOW_COMPONENTS = [WorkflowSchema, RunSchema];
