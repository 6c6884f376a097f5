import type { ScheduleRow, TriggerRow } from '../../store/index.ts';
import { asToolError, BuiltinToolError, type Scheduler } from '../builtins/index.ts';
import type { Schedules } from './schedules.ts';
import { TRIGGER_HEADERS, type Triggers } from './triggers.ts';

/** A schedule as the agent's model reads it. */
export const scheduleView = (r: ScheduleRow) => ({
  id: r.id,
  status: r.status,
  kind: r.kind,
  ...(r.kind === 'once' ? { run_at: r.runAt } : { cron: r.cron, timezone: r.timezone }),
  next_at: r.nextAt,
  message: r.message,
  thread: r.contextId,
  runs: r.runs,
  last_task_id: r.lastTaskId,
  ...(r.lastError ? { last_error: r.lastError } : {}),
});

/** A trigger as the agent's model reads it (never a webhook's secret). */
export const triggerView = (t: TriggerRow, url: string | null) => ({
  id: t.id,
  kind: t.kind,
  ...(t.kind === 'webhook' ? { url } : { workflow_id: t.workflowId, on: t.events }),
  message: t.message,
  thread: t.contextId,
  fires: t.fires,
  last_task_id: t.lastTaskId,
  ...(t.lastError ? { last_error: t.lastError } : {}),
});

/**
 * The Scheduler built-in's operations over the schedules feature (runtime/builtins/scheduler.ts names them). The
 * feature is read when a tool is called: it is built after the built-ins' tool source.
 */
export function schedulerPort(schedules: () => Schedules, triggers: () => Triggers): Scheduler {
  return {
    create: (caller, agentId, r) => asToolError(async () => scheduleView(await schedules().create(caller, agentId, r))),
    list: (caller, agentId) =>
      asToolError(async () => {
        const rows = await schedules().list(caller, { agentId, limit: 100 });
        // Active first (soonest next run first), then ended ones, newest first.
        const active = rows.filter((r) => r.status === 'active').sort((a, b) => (a.nextAt ?? '').localeCompare(b.nextAt ?? ''));
        return { schedules: [...active, ...rows.filter((r) => r.status !== 'active')].map(scheduleView) };
      }),
    cancel: (caller, agentId, id) =>
      asToolError(async () => {
        const r = await schedules().get(caller, id);
        if (r.agentId !== agentId) throw new BuiltinToolError(`no schedule ${id} of this agent`);
        return scheduleView(await schedules().cancel(caller, id));
      }),
    createTrigger: (caller, agentId, r) =>
      asToolError(async () => {
        const { trigger, url } = await triggers().create(caller, agentId, { ...r, kind: r.kind as TriggerRow['kind'] });
        if (trigger.kind !== 'webhook') return triggerView(trigger, url);
        // The signing secret never reaches the model (its context goes to the model's provider and stays in the
        // thread): the user reads a secret of their own with their credential.
        return {
          ...triggerView(trigger, url),
          signing: `The sender signs each POST to url with headers ${TRIGGER_HEADERS.timestamp}: <Unix seconds> and ${TRIGGER_HEADERS.signature}: sha256=<hex HMAC-SHA256 of "{timestamp}.{raw body}">. The user gets the secret with: platform triggers rotate-secret ${trigger.id} (POST /v1/triggers/${trigger.id}/rotate-secret).`,
        };
      }),
    listTriggers: (caller, agentId) =>
      asToolError(async () => {
        const rows = await triggers().list(caller, { agentId, own: true, limit: 100 });
        const urls = await triggers().urlsOf(rows);
        return { triggers: rows.map((t, i) => triggerView(t, urls[i]!)) };
      }),
    deleteTrigger: (caller, agentId, id) =>
      asToolError(async () => {
        const t = await triggers().get(caller, id);
        if (t.agentId !== agentId) throw new BuiltinToolError(`no trigger ${id} of this agent`);
        await triggers().remove(caller, id);
        return { id, deleted: true };
      }),
  };
}
