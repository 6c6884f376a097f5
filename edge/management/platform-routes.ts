import type { FastifyInstance } from 'fastify';
import { PlatformError, ACCESS_TOKEN_TTL_SECONDS, type Services } from '../../runtime/index.ts';

export const CLI_CLIENT_ID = 'platform-cli';

/** CLI bootstrap and the health probes of the management host. */
export function platformRoutes(app: FastifyInstance, services: Services, state: { draining: boolean }) {
  app.get('/v1/platform-cli/config', async () => ({
    data: {
      api_base_url: services.urls.api,
      domain: services.config.domain,
      client_id: CLI_CLIENT_ID,
      device_authorization_endpoint: `${services.urls.api}/oauth/device/authorize`,
      token_endpoint: `${services.urls.api}/oauth/token`,
      verification_uri: `${services.urls.api}/device`,
      poll_interval_seconds: services.config.devicePollIntervalSeconds,
      device_code_ttl_seconds: services.config.deviceCodeTtlSeconds,
      access_token_ttl_seconds: ACCESS_TOKEN_TTL_SECONDS,
      mcp_host_template: services.urls.mcp('{handle}'),
      agent_host_template: services.urls.agent('{handle}'),
    },
  }));

  app.get('/healthz', async () => ({ status: 'ok' }));

  app.get('/readyz', async () => {
    if (state.draining) throw new PlatformError('MGMT_UNAVAILABLE', 'the node is shutting down');
    try {
      await services.store.db.query('select 1');
    } catch {
      throw new PlatformError('MGMT_UNAVAILABLE', 'the database is unreachable');
    }
    return { status: 'ready' };
  });
}
