import type { Billing } from '../../runtime/accounts/index.ts';
import type { RateLimiter } from '../../runtime/core/rate-limit/index.ts';
import type { McpGuards } from './context.ts';

/** The MCP surface's guards: billing from the account (with per-node leases) and rate limits from the shared counters. */
export function createMcpGuards(deps: { billing: Billing; limiter: RateLimiter }): McpGuards {
  return {
    billing: (accountId) => deps.billing.state(accountId),
    allocate: (accountId, requestId) => deps.billing.allocate(accountId, requestId),
    refund: (accountId) => deps.billing.refund(accountId),
    rate: (kind, gatewayId, callerKey) => deps.limiter.check(kind, gatewayId, callerKey),
  };
}
