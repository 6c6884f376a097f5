import type { IncomingHttpHeaders } from 'node:http';
import type { BillingState } from '../../runtime/accounts/index.ts';
import type { Caller } from '../../runtime/identity/index.ts';
import type { GatewayView } from '../../actors/index.ts';

/**
 * The seams of the MCP surface. The gateway app (transport, methods, tool registry) resolves the gateway from the
 * Host and then asks, in this order: who is calling (admission, owned by the gateway's OAuth authorization server),
 * whether the account can pay (billing), and whether the caller is within its rate (limits).
 */
export interface McpGatewayContext {
  gateway: GatewayView;
  /** The gateway's public origin, e.g. `https://mcp-acme.example.com`: its OAuth issuer and resource. */
  origin: string;
}

export type McpAdmission =
  /** An authenticated caller (an API key of the gateway's account, or a token this gateway issued). */
  | { ok: true; caller: Caller; callerKey: string }
  /** An anonymous caller of a public gateway: no workspace anchor; limited per peer IP (`callerKey` = `ip:<addr>`). */
  | { ok: true; caller: null; callerKey: string }
  /** 401, with the `WWW-Authenticate` challenge that points at the protected-resource metadata. */
  | { ok: false; status: 401; wwwAuthenticate: string; message: string };

export type McpAdmit = (ctx: McpGatewayContext, req: { headers: IncomingHttpHeaders; ip: string }) => Promise<McpAdmission>;


export interface McpGuards {
  /** The account's billing state, checked on every request after admission: no_budget → 402, unknown → 503. */
  billing(accountId: string): Promise<BillingState>;
  /** Reserves the budget of one `tools/call` at dispatch; a refusal is reported inside the JSON-RPC envelope. */
  allocate(accountId: string, requestId: string): Promise<{ ok: true } | { ok: false; message: string }>;
  /**
   * Counts one request against a fixed 60 s window: `request` (tools/call and tools/list share it, 600/min) or
   * `initialize` (60/min), per gateway and caller. Fails open when the counter store is unreachable.
   */
  rate(kind: 'request' | 'initialize', gatewayId: string, callerKey: string): Promise<{ ok: true } | { ok: false; retryAfterSeconds: number }>;
  /** Gives back the budget of a call that was allocated but never ran (its lane refused it). */
  refund(accountId: string): void;
}
