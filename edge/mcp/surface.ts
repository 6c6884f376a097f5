import type { FastifyInstance, FastifyServerFactory } from 'fastify';
import type { Logger } from 'pino';
import { createGatewayOAuth, type Services } from '../../runtime/index.ts';
import type { CompileAhead } from '../http/index.ts';
import { createMcpAdmission } from './admission.ts';
import { createMcpApp } from './app.ts';
import { createMcpGuards } from './guards.ts';
import { registerMcpOAuthRoutes } from './oauth-routes.ts';

/** The services the MCP surface uses: the composition root hands it these and no others. */
export const MCP_SERVICES = ['config', 'urls', 'store', 'clock', 'bus', 'signer', 'gateways', 'gatewayTokens', 'accountStatus', 'billing', 'mcpLimiter', 'toolRegistry', 'autonomy', 'tasks'] as const;
export type McpServices = Pick<Services, (typeof MCP_SERVICES)[number]>;

/**
 * The MCP surface as the node serves it: the app wired to credential admission (API keys and the gateway's own
 * tokens), the billing and rate guards, the tool registry, the account's autonomy policies and the gateway's OAuth
 * authorization server.
 */
export function mcpSurface(s: McpServices, opts: { logger: Logger; serverFactory: FastifyServerFactory; compileAhead?: CompileAhead }): Promise<FastifyInstance> {
  const now = () => s.clock.now();
  return createMcpApp({
    services: s,
    logger: opts.logger,
    serverFactory: opts.serverFactory,
    ...(opts.compileAhead ? { compileAhead: opts.compileAhead } : {}),
    admit: createMcpAdmission({ store: s.store, tokens: s.gatewayTokens, now, bus: s.bus }),
    guards: createMcpGuards({ billing: s.billing, limiter: s.mcpLimiter }),
    registry: s.toolRegistry,
    policy: s.autonomy.policy,
    registerOAuthRoutes: (app) => registerMcpOAuthRoutes(app, { services: s, oauth: createGatewayOAuth({ store: s.store, tokens: s.gatewayTokens, now }) }),
  });
}
