// A platform node for the a2a-send bench, as its own process: it starts (the PostgreSQL of DATABASE_URL, else PGlite;
// one node, no NATS) with the demo tenant, binds the calc plugin to the demo agent so the scripted model can call
// `calc_add`, raises the tenant's budget so a load test is not a budget test, prints one JSON line — the node's URL,
// the agent's Host, a credential the A2A gateway admits (the demo service principal's API key: a service principal
// with execute authority) — and runs until SIGTERM or the end of its standard input.
import { DEMO_BUILTINS } from '../runtime/index.ts';
import { startBenchNode, uploadCalc } from './bench-node.ts';

export interface A2aNodeInfo {
  /** Where to connect (loopback). */
  url: string;
  /** The demo agent's Host header, `agent-demo.<domain>[:port]`. */
  host: string;
  /** The demo service principal's API key. */
  key: string;
  driver: 'pg' | 'pglite';
  /** The capability bound to the demo agent. */
  capabilityId: string;
}

const { node, demo, driver, fail } = await startBenchNode('a2a');
try {
  const svc = node.services;
  const capabilityId = await uploadCalc({ node, demo });
  await svc.admin.bindAgent({ agent: 'demo', capability: capabilityId });
  // The references' agents have the calculator only: so has ours (the demo tenant's built-ins are unbound).
  for (const builtin of DEMO_BUILTINS) await svc.admin.unbindAgent({ agent: 'demo', capability: builtin });
  await svc.admin.setBudget({ account: demo.accountId, credits: 1_000_000_000 });
  const info: A2aNodeInfo = { url: node.edge.localUrl, host: new URL(demo.agentUrl).host, key: demo.serviceKey, driver, capabilityId };
  process.stdout.write(`${JSON.stringify(info)}\n`);
} catch (err) {
  fail(err);
}
