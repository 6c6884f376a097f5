// The config module and the store only: the runtime loads below, while the store opens (bin/open-store.ts).
import { loadConfig } from '../../runtime/core/config/index.ts';
import type { PlatformNode } from '../node.ts';
import { openStoreEarly } from '../open-store.ts';
import { curlHint } from './http.ts';

function banner(node: PlatformNode): string {
  const { urls, config } = node.services;
  const lines = [
    '',
    `Platform node listening on ${config.host}:${node.edge.port}`,
    `  management API  ${urls.api}  (also ${urls.api.replace(`api.${config.domain}`, config.domain)})`,
    `  MCP gateways    ${urls.mcp('{handle}')}`,
    `  agent gateways  ${urls.agent('{handle}')}`,
    `  store           ${config.databaseUrl ? 'PostgreSQL (DATABASE_URL)' : `PGlite in ${config.dataDir}`}`,
  ];
  if (config.domain === 'localhost' || config.domain.endsWith('.localhost')) {
    lines.push(
      '',
      'Browsers and curl resolve *.localhost to this machine; Node and some resolvers do not. Reach a gateway with:',
      `  ${curlHint(urls.mcp('demo'))}`,
      `  or an /etc/hosts line: 127.0.0.1 api.${config.domain} mcp-demo.${config.domain} agent-demo.${config.domain}`,
    );
  }
  const demo = node.demo;
  if (demo) {
    lines.push(
      '',
      'Created the demo tenant. These secrets are shown once:',
      `  account id         ${demo.accountId}`,
      `  owner user         ${demo.userEmail}  password ${demo.userPassword}`,
      `  user API key       ${demo.userKey}`,
      `  service API key    ${demo.serviceKey}`,
      `  MCP gateway        ${demo.gatewayUrl}`,
      `  agent              ${demo.agentUrl}`,
      demo.plugin.state === 'active'
        ? `  tools              ${demo.plugin.tools.join(', ')}  (plugin ${demo.plugin.name}, bound to the gateway and the agent)`
        : `  tools              none: the demo plugin did not activate (${demo.plugin.reason ?? demo.plugin.state})`,
      '',
      `Try: ${curlHint(`${urls.api}/v1/capabilities`)} -H 'Authorization: Bearer ${demo.userKey}'`,
    );
  }
  return `${lines.join('\n')}\n\n`;
}

/** `platform serve`: one node until SIGINT/SIGTERM, then a graceful shutdown (drain HTTP, passivate, close store). */
export async function serveCli() {
  const config = loadConfig();
  const early = openStoreEarly(config);
  const { startPlatform } = await import('../node.ts');
  const node = await startPlatform({ config, early });
  process.stdout.write(banner(node));
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    node.logger.info({ signal }, 'shutting down');
    try {
      await node.close();
      process.exit(0);
    } catch (err) {
      node.logger.error({ err }, 'shutdown failed');
      process.exit(1);
    }
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}
