import type { ScheduleRow } from '../../store/index.ts';
import { asToolError, BuiltinToolError, type Scheduler } from '../builtins/index.ts';
import type { Schedules } from './schedules.ts';

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

/**
 * The Scheduler built-in's operations over the schedules feature (runtime/builtins/scheduler.ts names them). The
 * feature is read when a tool is called: it is built after the built-ins' tool source.
 */
export function schedulerPort(schedules: () => Schedules): Scheduler {
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
  };
}
