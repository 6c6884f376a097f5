import os from 'node:os';
import { budgetNote, cpuBudget } from '../budget.ts';
import { startJsonChild } from '../child.ts';
import { scope } from '../cleanup.ts';
import { mcpLoadClient } from '../mcp-client.ts';
import type { McpNodeInfo } from '../mcp-node.ts';
import { versus, type Row } from '../report.ts';
import { measure, status, type Measured, type Phase } from '../runner.ts';
import { runParameters, type Scenario } from '../scenario.ts';

/** Issue 16 §2: at many connections twice the SDK's calls/s; at one, at least its calls/s; p99 never above its. */
const TARGETS = { many: { minThroughputRatio: 2.0, maxP99Ratio: 1.0 }, one: { minThroughputRatio: 1.0, maxP99Ratio: 1.0 } };

const ADD = { name: 'calc_add', args: { a: 2, b: 40 }, text: '42' };

/**
 * `tools/call` of a trivial plugin tool through the whole gateway of a `platform` node running as its own process
 * (host routing, API-key admission, billing, rate counter, session check, tool registry, lane, sandbox threads), beside
 * the official MCP SDK's Streamable HTTP server serving the same tool as a plain function, a bare fastify JSON echo
 * as the ceiling and a bare route through a node's lane and sandbox as the floor (mcp-floor.ts), each its own process
 * too; the load comes from this process, with `--concurrency` connections and then with one. One session per
 * connection, opened before measuring.
 */
export const mcpCall: Scenario = {
  name: 'mcp-call',
  summary: 'tools/call through the MCP gateway of a platform node vs the official SDK server with the same tool, and a fastify echo, each its own process; at --concurrency connections and at one',
  needs: [],
  defaultConcurrency: 16,
  async run(opts) {
    const s = scope();
    try {
      status('mcp-call: starting a platform node, the SDK server, the echo server and the sandbox floor, each its own process');
      const nodeEnv: NodeJS.ProcessEnv = { ...process.env, PLATFORM_MAX_CONNECTIONS_PER_ADDRESS: String(Math.max(1024, opts.concurrency * 2)) };
      delete nodeEnv.DATABASE_URL;
      const [node, sdk, echo, floor] = await Promise.all([
        startJsonChild<McpNodeInfo>(s, 'the platform node', 'mcp-node', [], nodeEnv, 120_000, true),
        startJsonChild<{ origin: string }>(s, 'the SDK server', 'mcp-reference-server', ['--kind', 'sdk'], process.env),
        startJsonChild<{ origin: string }>(s, 'the echo server', 'mcp-reference-server', ['--kind', 'echo'], process.env),
        startJsonChild<{ origin: string }>(s, 'the sandbox floor', 'mcp-reference-server', ['--kind', 'floor'], process.env, 120_000),
      ]);
      status(`mcp-call: platform node (pid ${node.pid}, ${node.driver}) at ${node.url}; SDK server (pid ${sdk.pid}) at ${sdk.origin}; echo (pid ${echo.pid}) at ${echo.origin}; floor (pid ${floor.pid}) at ${floor.origin}`);

      const body = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: ADD.name, arguments: ADD.args } };
      const clients: ReturnType<typeof mcpLoadClient>[] = [];
      s.defer('close the load clients', async () => {
        for (const c of clients) await c.close();
      });
      /** The four phases at `n` connections: the echo ceiling, the sandbox floor, the SDK, ours; one session per connection. */
      const phasesAt = async (n: number): Promise<Phase[]> => {
        const ours = mcpLoadClient({ origin: node.url, host: node.host, path: '/', headers: { authorization: `Bearer ${node.key}` } }, n);
        const reference = mcpLoadClient({ origin: sdk.origin, host: new URL(sdk.origin).host, path: '/' }, n);
        const ceiling = mcpLoadClient({ origin: echo.origin, host: new URL(echo.origin).host, path: '/' }, n);
        const bare = mcpLoadClient({ origin: floor.origin, host: new URL(floor.origin).host, path: '/' }, n);
        clients.push(ours, reference, ceiling, bare);
        const sessions = (c: typeof ours) => Promise.all(Array.from({ length: n }, () => c.session()));
        const [ourSessions, refSessions] = [await sessions(ours), await sessions(reference)];
        let i = 0;
        let j = 0;
        const at = n === 1 ? 'one connection' : `${n} connections`;
        return [
          { label: `fastify JSON echo (ceiling), ${at}`, concurrency: n, call: () => ceiling.echo(body) },
          { label: `fastify route + lane + sandbox (floor), ${at}`, concurrency: n, call: () => bare.call(undefined, ADD.name, ADD.args, ADD.text) },
          { label: `MCP SDK Streamable HTTP server, ${at}`, concurrency: n, call: () => reference.call(refSessions[i++ % n], ADD.name, ADD.args, ADD.text) },
          { label: `platform MCP gateway, ${at}`, concurrency: n, call: () => ours.call(ourSessions[j++ % n], ADD.name, ADD.args, ADD.text) },
        ];
      };
      const phases = [...(await phasesAt(opts.concurrency)), ...(opts.concurrency === 1 ? [] : await phasesAt(1))];
      const watch = [
        { label: 'node', pid: node.pid },
        { label: 'sdk', pid: sdk.pid },
        { label: 'echo', pid: echo.pid },
        { label: 'floor', pid: floor.pid },
      ];
      const measured = await measure('mcp-call', phases, opts, watch);
      const rows: Row[] = [];
      const budgets: string[] = [];
      const cores = os.cpus().length;
      const floors: string[] = [];
      for (let k = 0; k < measured.length; k += 4) {
        const [ceiling, bare, reference, ours] = [measured[k]!, measured[k + 1]!, measured[k + 2]!, measured[k + 3]!];
        const limits = ours.label.endsWith('one connection') ? TARGETS.one : TARGETS.many;
        const at = ours.label.replace(/^platform MCP gateway, /, '');
        rows.push({ ...ceiling, role: 'reference' }, { ...bare, role: 'reference' }, { ...reference, role: 'reference' }, { ...ours, role: 'ours', vs: reference.label, targets: versus(ours, reference, limits) });
        floors.push(floorNote(at, limits, bare, reference, ours));
        const budget = cpuBudget({ cores, ratio: limits.minThroughputRatio, reference, ours, ourProcess: 'node', echo: { row: ceiling, process: 'echo' } });
        if (budget) budgets.push(budgetNote(at, budget));
      }
      return {
        title: 'MCP tools/call: the gateway vs the official SDK server, each its own process',
        parameters: { ...runParameters(opts), 'platform database': node.driver },
        rows,
        notes: [
          `Five processes: the load generator (this one: undici, one keep-alive connection per caller in flight, the same client code for every side), one \`platform\` node (${node.driver === 'pg' ? 'PostgreSQL' : 'PGlite'}, no NATS, started as bench/bench-node.ts starts it), the SDK server, the echo server and the sandbox floor (bench/mcp-reference-server.ts), all on this machine's ${cores} cores. The CPU column is each process's user and system time over the measured window.`,
          'Ours runs the tool in a WASM sandbox thread through the account\'s lane; the SDK server runs it as a JS function on its event loop. Both keep sessions (2025-11-25) and answer one SSE frame per call.',
          "The gateway's rate counter runs on every call with its limit raised (PLATFORM_MCP_REQUEST_RATE); every call is paid for from the node's budget lease (one durable Account turn per lease, leases grow with the call rate).",
          'The floor (bench/mcp-floor.ts) is a bare fastify route that runs the same `add` through the lane and sandbox a node uses, sized alike, and answers an SSE frame like the gateway\'s; no session, key, MCP handling, billing or decision record: what any server pays that runs tool code off its event loop, as the sandbox\'s per-call limits need.',
          "Each call whose sandbox thread has parked since its last call pays the machine line's wake-up on the node's main thread (the floor's, on its own): nearly every call at 16 connections, where a thread parks as soon as it has answered and its next call comes once the loop has taken the reply (runtime/core/sandbox/threads.ts). A server that runs its tools on its own loop, as the SDK's does, pays none.",
          'The node\'s loop, and the floor\'s, polls instead of sleeping for 1 ms after each request and while a sandbox call runs, when it has time to spare (runtime/core/loop/hot-loop.ts): their CPU figures include that polling, most of all at one connection.',
          ...floors,
          ...budgets,
        ],
      };
    } finally {
      await s.close();
    }
  },
};

type Rate = Pick<Measured, 'throughput' | 'p99'>;

/** Where the target stands against the floor: a target above the floor's calls/s is out of reach of any such gateway. */
export function floorNote(at: string, limits: { minThroughputRatio: number }, floor: Rate, reference: Rate, ours: Rate): string {
  const want = reference.throughput * limits.minThroughputRatio;
  const n = (x: number) => Math.round(x).toLocaleString('en-US');
  const verdict =
    floor.throughput < want
      ? `below the target itself: ${limits.minThroughputRatio}× the SDK server is ${(want / floor.throughput).toFixed(2)}× the floor, out of reach of any gateway that runs its tools in a sandbox thread on this machine`
      : `above the target, which is ${(want / floor.throughput).toFixed(2)}× the floor`;
  return `Floor at ${at}: ${n(floor.throughput)} calls/s (p99 ${floor.p99.toFixed(3)} ms) against the target's ${n(want)} (${limits.minThroughputRatio}× the SDK server's ${n(reference.throughput)}): ${verdict}; ours ran ${(ours.throughput / floor.throughput).toFixed(2)}× the floor.`;
}
