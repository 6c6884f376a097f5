export { createSchedules, scheduleProjection, occurrenceTaskId, type Schedules, type SchedulesDeps, type ScheduleRequest } from './schedules.ts';
export { SCHEDULE_LIMITS, nextOccurrence, specOf, type WhenRequest } from './schedule-spec.ts';
export { schedulerPort, scheduleView } from './scheduler-port.ts';
