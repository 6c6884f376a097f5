import { BuiltinToolError, type Builtin, type BuiltinContext, type BuiltinDeps, type BuiltinOperation, type Scheduler } from './builtin.ts';

const schedulerOf = (deps: BuiltinDeps): Scheduler => {
  if (!deps.scheduler) throw new BuiltinToolError('scheduling is not available on this node');
  return deps.scheduler;
};
/** Schedules belong to agents: the family never reaches an MCP gateway (surface-rules.ts); anything else is refused. */
const agentOf = (ctx: BuiltinContext): string => {
  if (ctx.surface.kind !== 'agent') throw new BuiltinToolError('schedules belong to agents: they are not offered on a gateway');
  return ctx.surface.id;
};

const scheduleRun: BuiltinOperation = {
  name: 'schedule_run',
  operation: 'schedule',
  description:
    'Schedule a future run of yourself, for this user: once at a time (`at`, ISO 8601 with its offset), once after a delay (`delay_seconds`), or on a five-field cron expression (`cron`, minute hour day month weekday, in `timezone`, UTC by default). ' +
    'Each run is a new task that starts with `message`, in this conversation (`thread: current`) or a new one each time (`thread: new`, the default). At most a year ahead.',
  readOnly: false,
  inputSchema: {
    type: 'object',
    properties: {
      message: { type: 'string', minLength: 1, description: 'What the run starts with, as if the user had sent it.' },
      at: { type: 'string', maxLength: 40 },
      delay_seconds: { type: 'integer', minimum: 1 },
      cron: { type: 'string', maxLength: 100 },
      timezone: { type: 'string', maxLength: 64 },
      thread: { type: 'string', enum: ['new', 'current'], default: 'new' },
    },
    required: ['message'],
    additionalProperties: false,
  },
  async run(deps, ctx, a) {
    const agentId = agentOf(ctx);
    if (a.thread === 'current' && !ctx.thread) throw new BuiltinToolError('this call is made outside a conversation: schedule with thread "new"');
    return schedulerOf(deps).create(ctx.caller, agentId, {
      message: String(a.message),
      ...(a.at !== undefined ? { at: String(a.at) } : {}),
      ...(a.delay_seconds !== undefined ? { delaySeconds: Number(a.delay_seconds) } : {}),
      ...(a.cron !== undefined ? { cron: String(a.cron) } : {}),
      ...(a.timezone !== undefined ? { timezone: String(a.timezone) } : {}),
      ...(a.thread === 'current' && ctx.thread ? { contextId: ctx.thread.contextId } : {}),
      ...(ctx.thread ? { originTaskId: ctx.thread.taskId } : {}),
    });
  },
};

const scheduleList: BuiltinOperation = {
  name: 'schedule_list',
  operation: 'list',
  description: 'List the schedules of yours for this user: active first, with their next run.',
  readOnly: true,
  inputSchema: { type: 'object', properties: {}, additionalProperties: false },
  run: (deps, ctx) => schedulerOf(deps).list(ctx.caller, agentOf(ctx)),
};

const scheduleCancel: BuiltinOperation = {
  name: 'schedule_cancel',
  operation: 'cancel',
  description: 'Cancel one of your schedules by its id: it runs no more.',
  readOnly: false,
  inputSchema: { type: 'object', properties: { id: { type: 'string', maxLength: 100 } }, required: ['id'], additionalProperties: false },
  run: (deps, ctx, a) => schedulerOf(deps).cancel(ctx.caller, agentOf(ctx), String(a.id)),
};

const triggerCreate: BuiltinOperation = {
  name: 'trigger_create',
  operation: 'trigger',
  description:
    'Register a trigger that starts a run of yourself, for this user: `kind: webhook` answers a url for an outside service to POST signed events to (each event starts a run with `message` and the event as data; the user gets the signing secret with the command the answer names, never you); ' +
    '`kind: workflow` starts a run when a run of the workflow `workflow_id` ends with a status in `on` (completed by default), with the run\'s output as data. Runs continue this conversation (`thread: current`) or open a new one each (`thread: new`, the default).',
  readOnly: false,
  inputSchema: {
    type: 'object',
    properties: {
      kind: { type: 'string', enum: ['webhook', 'workflow'] },
      message: { type: 'string', minLength: 1, description: 'What each run starts with, as if the user had sent it.' },
      workflow_id: { type: 'string', maxLength: 100 },
      on: { type: 'array', items: { type: 'string', enum: ['completed', 'failed', 'canceled'] }, maxItems: 3 },
      thread: { type: 'string', enum: ['new', 'current'], default: 'new' },
    },
    required: ['kind', 'message'],
    additionalProperties: false,
  },
  async run(deps, ctx, a) {
    const agentId = agentOf(ctx);
    if (a.thread === 'current' && !ctx.thread) throw new BuiltinToolError('this call is made outside a conversation: register with thread "new"');
    return schedulerOf(deps).createTrigger(ctx.caller, agentId, {
      kind: String(a.kind),
      message: String(a.message),
      ...(a.workflow_id !== undefined ? { workflowId: String(a.workflow_id) } : {}),
      ...(Array.isArray(a.on) ? { events: a.on.map(String) } : {}),
      ...(a.thread === 'current' && ctx.thread ? { contextId: ctx.thread.contextId } : {}),
      ...(ctx.thread ? { originTaskId: ctx.thread.taskId } : {}),
    });
  },
};

const triggerList: BuiltinOperation = {
  name: 'trigger_list',
  operation: 'list',
  description: 'List your triggers for this user, newest first, with how often each fired.',
  readOnly: true,
  inputSchema: { type: 'object', properties: {}, additionalProperties: false },
  run: (deps, ctx) => schedulerOf(deps).listTriggers(ctx.caller, agentOf(ctx)),
};

const triggerDelete: BuiltinOperation = {
  name: 'trigger_delete',
  operation: 'delete',
  description: 'Delete one of your triggers by its id: nothing starts from it again.',
  readOnly: false,
  inputSchema: { type: 'object', properties: { id: { type: 'string', maxLength: 100 } }, required: ['id'], additionalProperties: false },
  run: (deps, ctx, a) => schedulerOf(deps).deleteTrigger(ctx.caller, agentOf(ctx), String(a.id)),
};

export const SCHEDULER: Builtin = {
  id: 'builtin-scheduler',
  kind: 'Scheduler',
  family: 'scheduling',
  name: 'Scheduler',
  namespace: 'schedule',
  description: 'Future runs of an agent, once or on a cron expression, and triggers (signed webhooks, workflow runs that end) that start runs; each run a task of the agent for the user who asked, durable across restarts and node loss. Agents only.',
  sortOrder: 26,
  config: null,
  operations: [scheduleRun, scheduleList, scheduleCancel, triggerCreate, triggerList, triggerDelete],
};
