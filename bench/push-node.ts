// A platform node for the push-fanout bench, as its own process: it starts (the PostgreSQL of DATABASE_URL, else
// PGlite; one node, no NATS) with the demo tenant as tenant A and a second account as tenant B, each with an agent
// on the scripted model and a service principal's API key, budgets raised so a load test is not a budget test. Push
// receivers on loopback are admitted (PLATFORM_PUSH_ALLOW_LOOPBACK) and trusted through the CA file the bench made
// (PLATFORM_EGRESS_EXTRA_CA_FILE, from the bench's environment). It prints one JSON line — the node's URL, each
// tenant's agent Host and key, and where the node's push lane figures are served (a loopback HTTP port of this
// process: the bench reads what was dropped) — and runs until SIGTERM or the end of its standard input.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startBenchNode } from './bench-node.ts';

export interface PushNodeTenant {
  accountId: string;
  /** The agent's Host header, `agent-{handle}.<domain>[:port]`. */
  host: string;
  key: string;
}

export interface PushNodeInfo {
  url: string;
  driver: 'pg' | 'pglite';
  a: PushNodeTenant;
  b: PushNodeTenant;
  /** GET answers the node's push lane figures: `{node, a, b}`. */
  figuresUrl: string;
}

const { node, demo, driver, onStop, fail } = await startBenchNode('push', { PLATFORM_PUSH_ALLOW_LOOPBACK: 'true' });
const figures = createServer((_req, res) => {
  const d = node.services.pushDelivery;
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({ node: d.figures(), a: d.figures(info?.a.accountId), b: d.figures(info?.b.accountId) }));
});
onStop(() => figures.close());
let info: PushNodeInfo | undefined;

try {
  const admin = node.services.admin;
  const b = await admin.createAccount({ name: 'push-fanout tenant B' });
  await admin.createAgent({ account: b.id, handle: 'tenant-b', name: 'Tenant B' });
  const principal = await admin.createPrincipal({ account: b.id, name: 'bench', role: 'member' });
  const bKey = (await admin.createKey({ principal: principal.id })).key;
  for (const account of [demo.accountId, b.id]) await admin.setBudget({ account, credits: 1_000_000_000 });
  await new Promise<void>((r) => figures.listen(0, '127.0.0.1', r));
  const agentHost = (handle: string) => new URL(demo.agentUrl.replace('agent-demo.', `agent-${handle}.`)).host;
  info = {
    url: node.edge.localUrl,
    driver,
    a: { accountId: demo.accountId, host: new URL(demo.agentUrl).host, key: demo.serviceKey },
    b: { accountId: b.id, host: agentHost('tenant-b'), key: bKey },
    figuresUrl: `http://127.0.0.1:${(figures.address() as AddressInfo).port}/`,
  };
  process.stdout.write(`${JSON.stringify(info)}\n`);
} catch (err) {
  fail(err);
}
