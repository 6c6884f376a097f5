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

export const SCHEDULER: Builtin = {
  id: 'builtin-scheduler',
  kind: 'Scheduler',
  family: 'scheduling',
  name: 'Scheduler',
  namespace: 'schedule',
  description: 'Future runs of an agent, once or on a cron expression, each a task of the agent for the user who asked; durable across restarts and node loss. Agents only.',
  sortOrder: 26,
  config: null,
  operations: [scheduleRun, scheduleList, scheduleCancel],
};
