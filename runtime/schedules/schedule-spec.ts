import { Cron } from 'croner';
import type { ScheduleSpec } from '../../actors/index.ts';
import { PlatformError } from '../core/errors/index.ts';

/** Limits of schedules: how many are active per agent and per account, how far ahead, how long a message. */
export const SCHEDULE_LIMITS = {
  perAgent: 100,
  perAccount: 1000,
  /** A one-time run is at most this far ahead; a cron expression must occur within it. */
  horizonMs: 366 * 24 * 3600 * 1000,
  messageBytes: 16 * 1024,
  cronChars: 100,
  timezoneChars: 64,
} as const;

/** What a caller asks for: exactly one of a time, a delay, or a cron expression (in a time zone, UTC by default). */
export interface WhenRequest {
  at?: string;
  delaySeconds?: number;
  cron?: string;
  timezone?: string;
}

const invalid = (message: string) => new PlatformError('SCHEDULE_INVALID', message);

/**
 * A five-field cron expression (minute hour day-of-month month day-of-week, or a nickname such as `@daily`) in an IANA
 * time zone, read by croner: minute precision (no seconds field, so nothing runs more than once a minute), a day of
 * month and a day of week both given match either (as Vixie cron does). Finding the next occurrence is bounded (an
 * expression that never occurs, such as 30 February, answers null after a few milliseconds) and runs on the node's
 * thread: the expression is at most SCHEDULE_LIMITS.cronChars characters.
 */
function cronOf(expression: string, timezone: string): Cron {
  if (expression.length > SCHEDULE_LIMITS.cronChars) throw invalid(`cron: at most ${SCHEDULE_LIMITS.cronChars} characters`);
  if (timezone.length > SCHEDULE_LIMITS.timezoneChars) throw invalid(`timezone: at most ${SCHEDULE_LIMITS.timezoneChars} characters`);
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
  } catch {
    throw invalid(`timezone: ${JSON.stringify(timezone)} is not an IANA time zone (such as UTC or Europe/Berlin)`);
  }
  try {
    return new Cron(expression, { timezone, paused: true, mode: '5-part' });
  } catch (err) {
    throw invalid(`cron: ${JSON.stringify(expression)} is not a five-field cron expression (minute hour day month weekday): ${(err as Error).message}`);
  }
}

/** The first occurrence strictly after `after` (epoch ms), or null when there is none (a one-time run that ran). */
export function nextOccurrence(spec: ScheduleSpec, after: number): number | null {
  if (spec.kind === 'once') return spec.at > after ? spec.at : null;
  const next = cronOf(spec.cron, spec.timezone).nextRun(new Date(after));
  return next ? next.getTime() : null;
}

/** A caller's request checked against the limits: the schedule's spec and its first occurrence. */
export function specOf(w: WhenRequest, now: number): { spec: ScheduleSpec; firstAt: number } {
  const given = [w.at !== undefined, w.delaySeconds !== undefined, w.cron !== undefined].filter(Boolean).length;
  if (given !== 1) throw invalid('give exactly one of at (an ISO 8601 time), delay_seconds, or cron');
  if (w.timezone !== undefined && w.cron === undefined) throw invalid('timezone goes with cron only (at is an ISO 8601 time with its offset)');
  const horizon = now + SCHEDULE_LIMITS.horizonMs;
  if (w.cron !== undefined) {
    const spec: ScheduleSpec = { kind: 'cron', cron: w.cron.trim(), timezone: w.timezone ?? 'UTC' };
    const firstAt = nextOccurrence(spec, now);
    if (firstAt === null || firstAt > horizon) throw invalid(`cron: ${JSON.stringify(w.cron)} never occurs within the next ${SCHEDULE_LIMITS.horizonMs / 86_400_000} days`);
    return { spec, firstAt };
  }
  const at = w.at !== undefined ? Date.parse(w.at) : now + Number(w.delaySeconds) * 1000;
  if (w.at !== undefined && (Number.isNaN(at) || w.at.length > 40)) throw invalid(`at: ${JSON.stringify(w.at)} is not an ISO 8601 time`);
  if (w.delaySeconds !== undefined && (!Number.isInteger(w.delaySeconds) || w.delaySeconds < 1)) throw invalid('delay_seconds: a whole number of seconds, at least 1');
  if (at <= now) throw invalid(`at: ${new Date(at).toISOString()} has passed`);
  if (at > horizon) throw invalid(`the run is more than ${SCHEDULE_LIMITS.horizonMs / 86_400_000} days ahead`);
  return { spec: { kind: 'once', at }, firstAt: at };
}
