import { compileArtifacts, createLaneScheduler, createSandbox, parsePluginConfig, reflectComponent } from '../../runtime/index.ts';
import { buildComponent, CALC_WAT, CALC_WIT } from '../../test/helpers/components.ts';
import { closedLoop } from '../load.ts';
import type { Report } from '../report.ts';

const Wasm = (globalThis as unknown as { WebAssembly: { Module: new (b: Uint8Array) => unknown; Instance: new (m: unknown, i: unknown) => unknown } }).WebAssembly;

/**
 * Warm `add` calls through the account lane and the Piscina sandbox, beside the same transpiled component called
 * in-process (no lane, no worker): the difference is the sandbox's overhead per call.
 */
export async function sandboxCall(seconds: number): Promise<Report> {
  const wasm = await buildComponent({ wit: CALC_WIT, world: 'calc', wat: CALC_WAT });
  const signature = reflectComponent(wasm).functions[0]!.type;
  const files = await compileArtifacts(wasm, parsePluginConfig('schema_version: "1.0"'));
  const glue = (await import(`data:text/javascript;base64,${Buffer.from(files['plugin.js']!).toString('base64')}`)) as {
    instantiate(get: (n: string) => unknown, imports: object, core: (m: unknown, i: unknown) => unknown): { add(a: number, b: number): number };
  };
  const modules = Object.fromEntries(Object.entries(files).filter(([n]) => n.endsWith('.wasm')).map(([n, b]) => [n, new Wasm.Module(b)]));
  const inProcess = glue.instantiate((n) => modules[n], {}, (m, i) => new Wasm.Instance(m, i));

  const sandbox = createSandbox({ minThreads: 2, maxThreads: 2 });
  const lanes = createLaneScheduler({ slots: 2, perTenantInFlight: 2, queueCap: 1024 });
  const loaded = sandbox.load('bench', files);
  const viaSandbox = () => lanes.run('tenant', () => sandbox.invoke(loaded, { export: 'add', signature, args: { a: 2, b: 40 }, env: [], timeoutMs: 5_000 }));
  try {
    const sequential = await closedLoop('sandbox, 1 in flight', viaSandbox, { concurrency: 1, seconds });
    const parallel = await closedLoop('sandbox, 16 in flight', viaSandbox, { concurrency: 16, seconds });
    const reference = await closedLoop('in-process, 1 in flight', async () => inProcess.add(2, 40), { concurrency: 1, seconds });
    const overheadUs = (sequential.p50 - reference.p50) * 1000;
    return {
      scenario: 'sandbox-call',
      rows: [
        { ...sequential, role: 'ours' },
        { ...parallel, role: 'ours' },
        { ...reference, role: 'reference' },
      ],
      ratios: [{ name: 'p50 overhead per call (µs), sandbox vs in-process', value: overheadUs }],
      targets: [
        { description: `p50 overhead ≤ 150 µs (measured ${overheadUs.toFixed(0)} µs)`, met: overheadUs <= 150 },
        { description: `≥ 10,000 calls/s through lane and pool (measured ${parallel.throughput.toFixed(0)})`, met: parallel.throughput >= 10_000 },
      ],
      notes: ['Arguments are validated in invokeTool, not here: this measures lane + worker round trip + component call.'],
    };
  } finally {
    await sandbox.close();
  }
}
