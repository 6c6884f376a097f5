export { createSchedules, scheduleProjection, occurrenceTaskId, type Schedules, type SchedulesDeps, type ScheduleRequest } from './schedules.ts';
export { SCHEDULE_LIMITS, nextOccurrence, specOf, type WhenRequest } from './schedule-spec.ts';
export { schedulerPort, scheduleView, triggerView } from './scheduler-port.ts';
export { createTriggers, triggerSignature, TRIGGER_HEADERS, TRIGGER_LIMITS, TRIGGER_EVENTS, type Triggers, type Delivery } from './triggers.ts';
export { startAgentRun, type AgentRunOutcome } from './agent-run.ts';
