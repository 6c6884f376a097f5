import { Type, type Static } from 'typebox';
import { component, data, DEFAULT_LIMIT, MAX_LIMIT, Text, Timestamp, Uuid } from './schemas.ts';

/** Wire shapes of the schedule routes (issue 15 §3; docs/schedules.md). */

const Nullable = <T extends ReturnType<typeof Type.String> | ReturnType<typeof Type.Integer>>(t: T) => Type.Union([t, Type.Null()]);

export const ScheduleSchema = Type.Object(
  {
    id: Uuid('The schedule id.'),
    agent_id: Uuid('The agent it runs.'),
    owner_id: Type.String({ description: 'Who made it: every run is a task of theirs, with no more authority than they had then.' }),
    kind: Type.String({ enum: ['once', 'cron'] }),
    run_at: Nullable(Timestamp('A one-time run: when')),
    cron: Nullable(Type.String({ description: 'A five-field cron expression (minute hour day month weekday).' })),
    timezone: Nullable(Type.String({ description: 'The IANA time zone of `cron`.' })),
    message: Type.String({ description: 'What each run starts with, as if the user had sent it.' }),
    context_id: Nullable(Type.String({ description: 'The thread every run continues; null: each run opens its own.' })),
    origin_task_id: Nullable(Type.String({ description: 'The task whose tool call made it.' })),
    status: Type.String({ enum: ['active', 'completed', 'canceled', 'failed'] }),
    next_at: Nullable(Timestamp('The next run (null once ended)')),
    runs: Type.Integer({ minimum: 0, description: 'Tasks it started.' }),
    last_task_id: Nullable(Type.String({ description: 'The task of its last run (`GetTask` on the agent gateway).' })),
    last_run_at: Nullable(Timestamp('When its last run started')),
    last_error: Nullable(Type.String({ description: 'Why its last occurrence started no task, or why it failed.' })),
    created_at: Timestamp('When it was made'),
    updated_at: Timestamp('When it last moved'),
  },
  { $id: 'Schedule', description: "A future run of an agent, once or on a cron expression, made by the agent's Scheduler tools." },
);
export type ScheduleWire = Static<typeof ScheduleSchema>;

export const SchedulePath = Type.Object({ id: Uuid('The schedule id.') });
export const ScheduleListQuery = Type.Object({
  agent_id: Type.Optional(Uuid("Only this agent's schedules.")),
  status: Type.Optional(Type.String({ enum: ['active', 'completed', 'canceled', 'failed'] })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT, description: 'Page size.' })),
  cursor: Type.Optional(Text(300, 'Where the previous page ended (its `next_cursor`).')),
});
export const ScheduleList = data(
  Type.Object({ schedules: Type.Array(component(ScheduleSchema)), next_cursor: Nullable(Type.String()) }),
  'Schedules, newest first: every one for admins and owners, their own for anyone else.',
);
export const OneSchedule = data(component(ScheduleSchema), 'The schedule.');


/** Wire shapes of the trigger routes (issue 15 §3; docs/schedules.md, "Triggers"). */
export const TriggerSchema = Type.Object(
  {
    id: Uuid('The trigger id.'),
    agent_id: Uuid('The agent it starts.'),
    owner_id: Type.String({ description: 'Who made it: every run is a task of theirs, with no more authority than they had then.' }),
    kind: Type.String({ enum: ['webhook', 'workflow'] }),
    url: Nullable(Type.String({ description: 'A webhook trigger: where the sender POSTs its signed deliveries (`{agent_url}/triggers/{id}`).' })),
    workflow_id: Nullable(Type.String({ description: 'A workflow trigger: the workflow whose runs it waits for.' })),
    on: Type.Union([Type.Array(Type.String({ enum: ['completed', 'failed', 'canceled'] })), Type.Null()], { description: 'A workflow trigger: the ends of a run that start a run.' }),
    message: Type.String({ description: 'What each run starts with; the delivery or the workflow run follows as a data part.' }),
    context_id: Nullable(Type.String({ description: 'The thread every run continues; null: each run opens its own.' })),
    origin_task_id: Nullable(Type.String({ description: 'The task whose tool call made it.' })),
    fires: Type.Integer({ minimum: 0, description: 'Tasks it started.' }),
    last_task_id: Nullable(Type.String({ description: 'The task of its last run.' })),
    last_fired_at: Nullable(Timestamp('When it last fired')),
    last_error: Nullable(Type.String({ description: 'Why its last firing started no task.' })),
    created_at: Timestamp('When it was made'),
  },
  { $id: 'Trigger', description: "What starts a run of an agent from outside it: a signed webhook, or a workflow run's end; made by the agent's Scheduler tools." },
);
export type TriggerWire = Static<typeof TriggerSchema>;

export const TriggerPath = Type.Object({ id: Uuid('The trigger id.') });
export const TriggerListQuery = Type.Object({
  agent_id: Type.Optional(Uuid("Only this agent's triggers.")),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT, description: 'Page size.' })),
  cursor: Type.Optional(Text(300, 'Where the previous page ended (its `next_cursor`).')),
});
export const TriggerList = data(
  Type.Object({ triggers: Type.Array(component(TriggerSchema)), next_cursor: Nullable(Type.String()) }),
  'Triggers, newest first: every one for admins and owners, their own for anyone else.',
);
export const OneTrigger = data(component(TriggerSchema), 'The trigger.');
export const TriggerSecret = data(
  Type.Object({ id: Uuid('The trigger id.'), secret: Type.String({ description: 'The new signing secret, shown this once; the old one no longer verifies.' }) }),
  'The new signing secret.',
);

export const SCHEDULE_COMPONENTS = [ScheduleSchema, TriggerSchema];
