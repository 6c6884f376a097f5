import { CODE_LIMITS, runJavascript } from '../../runtime/index.ts';
import { startJsonChild } from '../child.ts';
import { scope } from '../cleanup.ts';
import { mcpLoadClient } from '../mcp-client.ts';
import type { McpNodeInfo } from '../mcp-node.ts';
import { ratio } from '../stats.ts';
import { measure, status } from '../runner.ts';
import { runParameters, type Scenario } from '../scenario.ts';

/** A small program: a loop, an object, JSON. */
const CODE = 'let s = 0; for (let i = 0; i < 1000; i++) s += i; ({ sum: s, words: "one two three".split(" ").length })';
const EXPECTED = JSON.stringify({ result: { sum: 499500, words: 3 }, console: '', truncated: false });

/**
 * `run_javascript` of the Code Runner built-in through a whole MCP gateway of a `platform` node running as its own
 * process (host routing, API-key admission, billing,
 * rate counter, session, tool registry, argument validation, the account's lane in the task pool, a fresh QuickJS
 * runtime in a worker), beside the same evaluation — a fresh QuickJS runtime with the same limits — called
 * in-process with nothing around it. The difference is what running tenants' code safely costs per call.
 */
export const builtinCall: Scenario = {
  name: 'builtin-call',
  summary: 'run_javascript through the MCP gateway, lane and worker vs the same QuickJS evaluation in-process',
  needs: [],
  defaultConcurrency: 8,
  async run(opts) {
    const s = scope();
    try {
      status('builtin-call: starting a platform node as its own process');
      const nodeEnv: NodeJS.ProcessEnv = { ...process.env, PLATFORM_MAX_CONNECTIONS_PER_ADDRESS: String(Math.max(1024, opts.concurrency * 2)) };
      delete nodeEnv.DATABASE_URL;
      const node = await startJsonChild<McpNodeInfo>(s, 'the platform node', 'mcp-node', [], nodeEnv, 120_000, true);
      // The demo gateway has the Code Runner bound from the first start.
      const ours = mcpLoadClient({ origin: node.url, host: node.demoHost, path: '/', headers: { authorization: `Bearer ${node.key}` } }, opts.concurrency);
      s.defer('close the load client', () => ours.close());
      const sessions = await Promise.all(Array.from({ length: opts.concurrency }, () => ours.session()));
      let i = 0;
      const limits = { timeoutMs: CODE_LIMITS.defaultTimeoutMs, memoryBytes: CODE_LIMITS.memoryBytes, outputChars: CODE_LIMITS.outputChars };
      const inProcess = async () => {
        const r = await runJavascript(CODE, limits);
        if (!r.ok || r.result !== JSON.stringify({ sum: 499500, words: 3 })) throw new Error(`unexpected evaluation: ${JSON.stringify(r)}`);
      };
      const [reference, one, many] = await measure(
        'builtin-call',
        [
          { label: 'QuickJS in-process, fresh runtime per call', concurrency: 1, call: inProcess },
          { label: 'run_javascript via MCP gateway, lane and worker, 1 in flight', concurrency: 1, call: () => ours.call(sessions[0], 'run_javascript', { code: CODE }, EXPECTED) },
          { label: `run_javascript via MCP gateway, lane and worker, ${opts.concurrency} in flight`, concurrency: opts.concurrency, call: () => ours.call(sessions[i++ % sessions.length], 'run_javascript', { code: CODE }, EXPECTED) },
        ],
        opts,
        [{ label: 'node', pid: node.pid }],
      );
      const overheadMs = one!.p50 - reference!.p50;
      return {
        title: 'run_javascript through the gateway vs QuickJS in-process',
        parameters: runParameters(opts),
        rows: [
          { ...reference!, role: 'reference' },
          { ...one!, role: 'ours', vs: reference!.label },
          { ...many!, role: 'ours', vs: reference!.label },
        ],
        notes: [
          `No target: the row shows what the platform adds to one evaluation — p50 ${overheadMs.toFixed(2)} ms at 1 in flight, ${ratio(many!.throughput, reference!.throughput).toFixed(2)}× the in-process calls/s at ${opts.concurrency} in flight (the in-process reference uses one core; ours at most the task pool's two threads, one per account at a time, the node's thread doing the HTTP).`,
          'Both sides create a fresh QuickJS runtime per call with the same memory limit and deadline; every answer is checked.',
        ],
      };
    } finally {
      await s.close();
    }
  },
};
