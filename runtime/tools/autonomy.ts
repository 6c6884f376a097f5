import { hasAuthority, type Caller } from '../identity/index.ts';
import type { BindingTarget, ToolEntry } from './tool.ts';

/** What policy says of one call: run it, refuse it, or ask a human first. */
export type AutonomyDecision = { decision: 'allow' } | { decision: 'deny'; reason: string } | { decision: 'ask'; reason: string };

/** What a tool list tells a caller in advance (`_meta["dev.platform/autonomy"].outcome`). */
export type AutonomyOutcome = 'allow' | 'deny' | 'may_deny_on_args' | 'ungated';

/**
 * The autonomy seam the surfaces call (runtime/approvals implements it with the account's policies). `target` is
 * where the tool is bound: a gateway (the MCP surface, where nobody can answer an `ask`) or an agent.
 */
export interface AutonomyPolicy {
  /** The outcome a caller can expect for a tool before any arguments are known. */
  outlook(caller: Caller | null, tool: ToolEntry, target: BindingTarget): Promise<AutonomyOutcome>;
  /** The decision for one call. */
  evaluate(caller: Caller | null, tool: ToolEntry, args: unknown, target: BindingTarget): Promise<AutonomyDecision>;
}

/** Why a caller without execute authority is refused, whatever any policy says. */
export const roleDenial = (caller: Caller): string => `the ${caller.role} role lacks execute authority`;

/**
 * The policy of the role rules alone (no account policies): a caller with execute authority may run every bound
 * tool; a caller without it (a viewer) may not; an anonymous caller of a public gateway is not gated (the gateway's
 * owner chose to make it public).
 */
export const defaultAutonomyPolicy: AutonomyPolicy = {
  async outlook(caller) {
    if (caller === null) return 'ungated';
    return hasAuthority(caller.role, 'execute') ? 'allow' : 'deny';
  },
  async evaluate(caller) {
    if (caller === null) return { decision: 'allow' };
    return hasAuthority(caller.role, 'execute') ? { decision: 'allow' } : { decision: 'deny', reason: roleDenial(caller) };
  },
};

/** The reason an MCP call that policy sends to a human is refused: nobody can answer on this surface. */
export const NON_INTERACTIVE = 'non_interactive_surface';

/** Resolves a decision on a surface without a human in the loop: `ask` becomes a denial. */
export async function decideNonInteractive(
  policy: AutonomyPolicy,
  caller: Caller | null,
  tool: ToolEntry,
  args: unknown,
  target: BindingTarget,
): Promise<{ allowed: true } | { allowed: false; reason: string }> {
  const d = await policy.evaluate(caller, tool, args, target);
  if (d.decision === 'allow') return { allowed: true };
  if (d.decision === 'ask') return { allowed: false, reason: NON_INTERACTIVE };
  return { allowed: false, reason: d.reason };
}
