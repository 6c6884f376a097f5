import { PlatformError, ACCESS_TOKEN_TTL_SECONDS, type Services } from '../../runtime/index.ts';
import { errorResponses, NO_CREDENTIAL } from './openapi.ts';
import { CliConfig, Healthy, Ready, type ManagementApp } from './schemas.ts';

export const CLI_CLIENT_ID = 'platform-cli';

/** CLI bootstrap and the health probes of the management host. */
export function platformRoutes(app: ManagementApp, services: Pick<Services, 'urls' | 'config' | 'store'>, state: { draining: boolean }) {
  app.get(
    '/v1/platform-cli/config',
    {
      schema: {
        operationId: 'getCliConfig',
        tags: ['platform'],
        summary: 'CLI bootstrap',
        description: 'Where the CLI logs in (device flow) and how gateway origins are formed.',
        security: NO_CREDENTIAL,
        response: { 200: CliConfig, ...errorResponses([500]) },
      },
    },
    async () => ({
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
    }),
  );

  app.get(
    '/healthz',
    { schema: { operationId: 'getHealth', tags: ['platform'], summary: 'Liveness probe', security: NO_CREDENTIAL, response: { 200: Healthy, ...errorResponses([500]) } } },
    async () => ({ status: 'ok' as const }),
  );

  app.get(
    '/readyz',
    {
      schema: {
        operationId: 'getReadiness',
        tags: ['platform'],
        summary: 'Readiness probe',
        security: NO_CREDENTIAL,
        response: { 200: Ready, ...errorResponses([500, 503], { 503: 'The node is shutting down, or its database is unreachable.' }) },
      },
    },
    async () => {
      if (state.draining) throw new PlatformError('MGMT_UNAVAILABLE', 'the node is shutting down');
      try {
        await services.store.db.query('select 1');
      } catch {
        throw new PlatformError('MGMT_UNAVAILABLE', 'the database is unreachable');
      }
      return { status: 'ready' as const };
    },
  );
}
