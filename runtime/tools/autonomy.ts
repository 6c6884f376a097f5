import { hasAuthority, type Caller } from '../identity/index.ts';
import type { ToolEntry } from './tool.ts';

/** What policy says of one call: run it, refuse it, or ask a human first. */
export type AutonomyDecision = { decision: 'allow' } | { decision: 'deny'; reason: string } | { decision: 'ask'; reason: string };

/** What a tool list tells a caller in advance (`_meta["dev.platform/autonomy"].outcome`). */
export type AutonomyOutcome = 'allow' | 'deny' | 'may_deny_on_args' | 'ungated';

export interface AutonomyPolicy {
  /** The outcome a caller can expect for a tool before any arguments are known. */
  outlook(caller: Caller | null, tool: ToolEntry): AutonomyOutcome;
  /** The decision for one call. */
  evaluate(caller: Caller | null, tool: ToolEntry, args: unknown): AutonomyDecision;
}

/**
 * The default policy until account policies exist: a caller with execute authority may run every bound tool; a
 * caller without it (a viewer) may not; an anonymous caller of a public gateway is not gated (the gateway's owner
 * chose to make it public).
 */
export const defaultAutonomyPolicy: AutonomyPolicy = {
  outlook(caller) {
    if (caller === null) return 'ungated';
    return hasAuthority(caller.role, 'execute') ? 'allow' : 'deny';
  },
  evaluate(caller) {
    if (caller === null) return { decision: 'allow' };
    return hasAuthority(caller.role, 'execute') ? { decision: 'allow' } : { decision: 'deny', reason: `the ${caller.role} role lacks execute authority` };
  },
};

/** The reason an MCP call that policy sends to a human is refused: nobody can answer on this surface. */
export const NON_INTERACTIVE = 'non_interactive_surface';

/** Resolves a decision on a surface without a human in the loop: `ask` becomes a denial. */
export function decideNonInteractive(policy: AutonomyPolicy, caller: Caller | null, tool: ToolEntry, args: unknown): { allowed: true } | { allowed: false; reason: string } {
  const d = policy.evaluate(caller, tool, args);
  if (d.decision === 'allow') return { allowed: true };
  if (d.decision === 'ask') return { allowed: false, reason: NON_INTERACTIVE };
  return { allowed: false, reason: d.reason };
}
