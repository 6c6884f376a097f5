import type { FastifyInstance, FastifyServerFactory } from 'fastify';
import type { Logger } from 'pino';
import type { Services } from '../../runtime/index.ts';
import type { CompileAhead } from '../http/index.ts';
import { createA2aAdmission } from './admission.ts';
import { createA2aApp } from './app.ts';
import type { A2aBackend } from './backend.ts';
import { agentBackend } from './agent-backend.ts';

/** The services the agent gateway uses: the composition root hands it these and no others. */
export const A2A_SERVICES = ['config', 'urls', 'store', 'clock', 'bus', 'accountStatus', 'agentTokens', 'tasks', 'agents', 'push', 'triggers'] as const;
export type A2aServices = Pick<Services, (typeof A2A_SERVICES)[number]>;

/**
 * The agent gateway as the node serves it: the app wired to its admission (service principals' API keys and agent
 * tokens) and to the node's agent runtime (tests may put another backend in its place).
 */
export function a2aSurface(s: A2aServices, opts: { logger: Logger; serverFactory: FastifyServerFactory; backend?: A2aBackend; compileAhead?: CompileAhead }): Promise<FastifyInstance> {
  return createA2aApp({
    services: s,
    logger: opts.logger,
    serverFactory: opts.serverFactory,
    ...(opts.compileAhead ? { compileAhead: opts.compileAhead } : {}),
    admit: createA2aAdmission({ store: s.store, agentTokens: s.agentTokens, now: () => s.clock.now(), bus: s.bus }),
    backend: opts.backend ?? agentBackend(s.agents, s.push),
  });
}
