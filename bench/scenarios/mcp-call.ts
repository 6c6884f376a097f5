import { registerUpload, versionOutcome } from '../../runtime/index.ts';
import { buildComponent } from '../../test/helpers/components.ts';
import { CALC_WAT, CALC_WIT } from '../../test/helpers/mcp.ts';
import { npack } from '../../test/helpers/npack.ts';
import { scope } from '../cleanup.ts';
import { inProcessNode } from '../in-process-node.ts';
import { mcpLoadClient } from '../mcp-client.ts';
import { startEchoServer, startSdkServer } from '../mcp-reference.ts';
import { ratio } from '../stats.ts';
import { measure, status } from '../runner.ts';
import { runParameters, type Scenario } from '../scenario.ts';

const TARGETS = { minThroughputRatio: 1.0, maxP99Ratio: 1.5 };

/**
 * `tools/call` of a trivial plugin tool through the whole gateway (host routing, bearer admission, billing, rate
 * counter, session check, tool registry, lane, Piscina sandbox), beside the official MCP SDK's Streamable HTTP
 * server serving the same tool as a plain in-process function, and a bare fastify JSON echo as the ceiling. All
 * three run in this process behind the same load client, one session per virtual client.
 */
export const mcpCall: Scenario = {
  name: 'mcp-call',
  summary: 'tools/call through the whole MCP gateway vs the official SDK server with the same tool, and a fastify echo',
  needs: [],
  defaultConcurrency: 16,
  async run(opts) {
    const s = scope();
    try {
      status('mcp-call: starting a platform node (PGlite), the SDK server and the echo server');
      const { node, config } = await inProcessNode(s, 'mcp-call', opts.concurrency);
      const svc = node.services;
      const demo = node.demo!;
      const user = (await svc.store.principals.findUserByEmail(demo.userEmail))!;
      const wasm = await buildComponent({ wit: CALC_WIT, world: 'calc', wat: CALC_WAT });
      const archive = await npack([{ name: 'calc.wasm', body: Buffer.from(wasm) }, { name: 'platform.yaml', body: 'schema_version: "1.0"\nmetadata: { name: calc }' }, { name: 'calc.wit', body: CALC_WIT }]);
      const up = await registerUpload(svc, { accountId: demo.accountId, principalId: user.id, filename: 'calc.npack', archive });
      await versionOutcome(svc, { accountId: demo.accountId, capabilityId: up.capability_id, version: 1 });
      const gateway = await svc.admin.createGateway({ account: demo.accountId, handle: 'bench', auth: 'private', presentation: 'direct' });
      await svc.admin.bindGateway({ gateway: gateway.id, capability: up.capability_id });

      const sdk = await startSdkServer();
      s.defer('stop the SDK server', () => sdk.close());
      const echo = await startEchoServer();
      s.defer('stop the echo server', () => echo.close());

      const ours = mcpLoadClient({ origin: node.edge.localUrl, host: `mcp-bench.${config.domain}`, path: '/', headers: { authorization: `Bearer ${demo.userKey}` } }, opts.concurrency);
      const reference = mcpLoadClient({ origin: sdk.origin, host: new URL(sdk.origin).host, path: '/' }, opts.concurrency);
      const ceiling = mcpLoadClient({ origin: echo.origin, host: new URL(echo.origin).host, path: '/' }, opts.concurrency);
      s.defer('close the load clients', async () => {
        await ours.close();
        await reference.close();
        await ceiling.close();
      });
      // One session per virtual client, opened before measuring, used round-robin by the closed-loop callers.
      const sessions = async (c: ReturnType<typeof mcpLoadClient>) => Promise.all(Array.from({ length: opts.concurrency }, () => c.session()));
      const ourSessions = await sessions(ours);
      const refSessions = await sessions(reference);
      let i = 0;
      let j = 0;
      const body = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'calc_add', arguments: { a: 2, b: 40 } } };

      const [ceilingRow, referenceRow, oursRow] = await measure(
        'mcp-call',
        [
          { label: 'fastify JSON echo (ceiling)', concurrency: opts.concurrency, call: () => ceiling.echo(body) },
          { label: 'MCP SDK Streamable HTTP server', concurrency: opts.concurrency, call: () => reference.call(refSessions[i++ % refSessions.length], 'calc_add', { a: 2, b: 40 }, '42') },
          { label: 'platform MCP gateway (auth, limits, lane, sandbox)', concurrency: opts.concurrency, call: () => ours.call(ourSessions[j++ % ourSessions.length], 'calc_add', { a: 2, b: 40 }, '42') },
        ],
        opts,
      );
      const tput = ratio(oursRow!.throughput, referenceRow!.throughput);
      const p99 = ratio(oursRow!.p99, referenceRow!.p99);
      return {
        title: 'MCP tools/call: the gateway vs the official SDK server',
        parameters: runParameters(opts),
        rows: [
          { ...ceilingRow!, role: 'reference' },
          { ...referenceRow!, role: 'reference' },
          {
            ...oursRow!,
            role: 'ours',
            vs: referenceRow!.label,
            targets: [
              { description: `throughput ≥ ${TARGETS.minThroughputRatio.toFixed(1)}× the SDK server (${tput.toFixed(2)}×)`, met: tput >= TARGETS.minThroughputRatio },
              { description: `p99 ≤ ${TARGETS.maxP99Ratio}× the SDK server (${p99.toFixed(2)}×)`, met: p99 <= TARGETS.maxP99Ratio },
            ],
          },
        ],
        notes: [
          `Ours runs the tool in a WASM sandbox worker (Piscina) through the account's lane; the SDK server runs it as a JS function on the event loop. Both keep sessions (2025-11-25) and answer one SSE frame per call.`,
          `The gateway's rate counter runs on every call with its limit raised (PLATFORM_MCP_REQUEST_RATE); every call is paid for from the node's budget lease (one durable Account turn per lease, leases grow with the call rate).`,
          `Ceiling: a fastify route echoing the JSON-RPC body, same client, same connections: ${Math.round(ceilingRow!.throughput).toLocaleString('en-US')} calls/s.`,
        ],
      };
    } finally {
      await s.close();
    }
  },
};
