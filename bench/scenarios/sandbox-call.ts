import { buildComponent, CALC_WAT, CALC_WIT } from '../../test/helpers/components.ts';
import { nodeSizedSandbox } from '../node-sandbox.ts';
import { ratio } from '../stats.ts';
import { measure, status } from '../runner.ts';
import { runParameters, type Scenario } from '../scenario.ts';

const Wasm = (globalThis as unknown as { WebAssembly: { Module: new (b: Uint8Array) => unknown; Instance: new (m: unknown, i: unknown) => unknown } }).WebAssembly;

/** Issue 16 §2: at most 80 µs over the in-process call at p50, one in flight; 30,000 calls/s with 64 in flight. */
const MAX_OVERHEAD_US = 80;
const MIN_CALLS_PER_S = 30_000;

/**
 * Warm `add` calls through the account lane and the sandbox threads, beside the same transpiled component called
 * in-process (no lane, no worker): the difference is the sandbox's overhead per call.
 */
export const sandboxCall: Scenario = {
  name: 'sandbox-call',
  summary: 'warm tool calls through the account lane and the sandbox threads vs the same component called in-process',
  needs: [],
  defaultConcurrency: 64,
  async run(opts) {
    status('sandbox-call: building and transpiling the component');
    // Sized as a node sizes them on this machine: the bench measures the sandbox a tenant's calls meet.
    const sandbox = await nodeSizedSandbox('bench', await buildComponent({ wit: CALC_WIT, world: 'calc', wat: CALC_WAT }));
    const { files, sizing } = sandbox;
    const glue = (await import(`data:text/javascript;base64,${Buffer.from(files['plugin.js']!).toString('base64')}`)) as {
      instantiate(get: (n: string) => unknown, imports: object, core: (m: unknown, i: unknown) => unknown): { add(a: number, b: number): number };
    };
    const modules = Object.fromEntries(Object.entries(files).filter(([n]) => n.endsWith('.wasm')).map(([n, b]) => [n, new Wasm.Module(b)]));
    const inProcess = glue.instantiate((n) => modules[n], {}, (m, i) => new Wasm.Instance(m, i));
    const viaSandbox = () => sandbox.call('add', { a: 2, b: 40 });
    try {
      const [reference, sequential, parallel] = await measure(
        'sandbox-call',
        [
          { label: 'in-process, 1 in flight', concurrency: 1, call: async () => inProcess.add(2, 40) },
          { label: 'sandbox, 1 in flight', concurrency: 1, call: viaSandbox },
          { label: `sandbox, ${opts.concurrency} in flight`, concurrency: opts.concurrency, call: viaSandbox },
        ],
        opts,
      );
      const overheadUs = (sequential!.p50 - reference!.p50) * 1000;
      return {
        title: 'tool calls through lane and sandbox vs in-process',
        parameters: runParameters(opts),
        rows: [
          { ...reference!, role: 'reference' },
          { ...sequential!, role: 'ours', vs: reference!.label, targets: [{ description: `p50 overhead ≤ ${MAX_OVERHEAD_US} µs (${overheadUs.toFixed(0)} µs)`, met: overheadUs <= MAX_OVERHEAD_US }] },
          {
            ...parallel!,
            role: 'ours',
            vs: reference!.label,
            targets: [{ description: `≥ ${MIN_CALLS_PER_S.toLocaleString('en-US')} calls/s`, met: parallel!.throughput >= MIN_CALLS_PER_S }],
          },
        ],
        notes: [
          `p50 overhead per call: ${overheadUs.toFixed(0)} µs (sandbox p50 − in-process p50); the in-process call is ${ratio(reference!.throughput, sequential!.throughput).toFixed(0)}× the sandbox's sequential calls/s.`,
          `Arguments are validated in invokeTool, not here: this measures lane + worker round trip + component call. Sized as a node sizes them here (sandboxSizing): ${sizing.threads} sandbox threads, ${sizing.slots} lane slots, at most ${sizing.perTenantInFlight} calls of the one tenant in flight in the sandbox; the rest wait in its lane.`,
        ],
      };
    } finally {
      await sandbox.close();
    }
  },
};
