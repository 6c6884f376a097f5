// A platform node for the mcp-call and builtin-call benches, as its own process (the PostgreSQL of DATABASE_URL, else PGlite; one node,
// no NATS), as `npm start` runs one: it uploads the calc plugin, binds it to a private gateway `bench` of the demo
// tenant, raises the tenant's budget and the MCP rate limits (a load test is not a budget or a rate-limit test; the
// counters still run on every call), prints one JSON line — the node's URL, the gateway's Host, the demo user's API key
// — and runs until SIGTERM or the end of its standard input.
import { startBenchNode, uploadCalc } from './bench-node.ts';

export interface McpNodeInfo {
  url: string;
  /** The gateway's Host header, `mcp-bench.<domain>`. */
  host: string;
  key: string;
  /** The demo gateway's Host header (the Code Runner and the other demo built-ins are bound there). */
  demoHost: string;
  driver: 'pg' | 'pglite';
}

const { node, config, demo, driver, fail } = await startBenchNode('mcp', { PLATFORM_MCP_REQUEST_RATE: '1000000000', PLATFORM_MCP_INITIALIZE_RATE: '1000000' });
try {
  const svc = node.services;
  const capability = await uploadCalc({ node, demo });
  const gateway = await svc.admin.createGateway({ account: demo.accountId, handle: 'bench', auth: 'private', presentation: 'direct' });
  await svc.admin.bindGateway({ gateway: gateway.id, capability });
  await svc.admin.setBudget({ account: demo.accountId, credits: 1_000_000_000 });
  const info: McpNodeInfo = { url: node.edge.localUrl, host: `mcp-bench.${config.domain}`, key: demo.userKey, demoHost: new URL(demo.gatewayUrl).host, driver };
  process.stdout.write(`${JSON.stringify(info)}\n`);
} catch (err) {
  fail(err);
}
