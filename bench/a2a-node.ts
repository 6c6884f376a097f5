// A platform node for the a2a-send bench, as its own process: it starts (the PostgreSQL of DATABASE_URL, else PGlite;
// one node, no NATS) with the demo tenant, raises the tenant's budget so a load test is not a budget test, prints one
// JSON line — the node's URL, the agent's Host, a credential the A2A gateway admits (the demo service principal's API
// key: a service principal with execute authority) — and runs until SIGTERM or the end of its standard input.
//   --model-url URL --model NAME: the agent's model is the one served at URL (the bench's scripted model, a process of
//   its own: bench/scripted-model.ts), configured as the operator provider `bench`; the agent measured is then a new
//   agent `bench` of the demo tenant, with the demo agent's instructions and the calc plugin bound. Without them, the
//   demo agent itself, on the node's own scripted model, with the calc plugin bound.
// Either way the agent has the calculator only, as the references' agents do.
import { parseArgs } from 'node:util';
import { DEMO_BUILTINS } from '../runtime/index.ts';
import { startBenchNode, uploadCalc } from './bench-node.ts';

export interface A2aNodeInfo {
  /** Where to connect (loopback). */
  url: string;
  /** The measured agent's Host header, `agent-<handle>.<domain>[:port]`. */
  host: string;
  /** The demo service principal's API key. */
  key: string;
  driver: 'pg' | 'pglite';
  /** The capability bound to the measured agent. */
  capabilityId: string;
  /** The model the agent runs on (`provider/model`). */
  model: string;
}

const { values } = parseArgs({ options: { 'model-url': { type: 'string' }, model: { type: 'string' } } });
const external = values['model-url'] && values.model ? { url: values['model-url'], model: `bench/${values.model}` } : null;
const { node, demo, driver, fail } = await startBenchNode('a2a', external ? { PLATFORM_MODEL_PROVIDERS: `bench=${external.url}` } : {});
try {
  const svc = node.services;
  const capabilityId = await uploadCalc({ node, demo });
  let agent = await svc.admin.showAgent({ agent: 'demo' });
  if (external) {
    const made = await svc.admin.createAgent({ account: demo.accountId, handle: 'bench', name: 'Bench agent', description: 'The agent the a2a-send bench measures', instructions: agent.instructions, model: external.model });
    agent = await svc.admin.showAgent({ agent: made.id });
  } else {
    // The references' agents have the calculator only: so has ours (the demo tenant's built-ins are unbound).
    for (const builtin of DEMO_BUILTINS) await svc.admin.unbindAgent({ agent: 'demo', capability: builtin });
  }
  await svc.admin.bindAgent({ agent: agent.id, capability: capabilityId });
  await svc.admin.setBudget({ account: demo.accountId, credits: 1_000_000_000 });
  const info: A2aNodeInfo = { url: node.edge.localUrl, host: new URL(agent.url).host, key: demo.serviceKey, driver, capabilityId, model: agent.model };
  process.stdout.write(`${JSON.stringify(info)}\n`);
} catch (err) {
  fail(err);
}
