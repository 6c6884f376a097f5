import { setTimeout as sleep } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import { compileArtifacts, createLaneScheduler, createSandbox, parsePluginConfig, reflectComponent } from '../../runtime/index.ts';
import { buildComponent } from '../../test/helpers/components.ts';
import { interruption } from '../cleanup.ts';
import { status, type Measured } from '../runner.ts';
import { ratio, summarize } from '../stats.ts';
import { runParameters, type Scenario } from '../scenario.ts';

const WIT = `package bench:work;
world work {
  export add: func(a: s32, b: s32) -> s32;
  export work: func(n: s32) -> s32;
}`;
// `work` burns CPU for n iterations: a slow but well-behaved call.
const WAT = `(module
  (memory (export "memory") 1)
  (func (export "add") (param i32 i32) (result i32) local.get 0 local.get 1 i32.add)
  (func (export "work") (param $n i32) (result i32)
    (loop $l local.get $n i32.const 1 i32.sub local.tee $n br_if $l)
    local.get $n))`;

const FLOOD = 200;
const SPARSE_GAP_MS = 10;

/** Tenant B's sparse fast calls, alone and while tenant A floods its lane with slow calls. */
export const noisyNeighbor: Scenario = {
  name: 'noisy-neighbor',
  summary: "tenant B's sparse fast calls while tenant A floods its lane with slow calls vs B's calls alone",
  needs: [],
  defaultConcurrency: 1,
  async run(opts) {
    status('noisy-neighbor: building and transpiling the component');
    const wasm = await buildComponent({ wit: WIT, world: 'work', wat: WAT });
    const sig = Object.fromEntries(reflectComponent(wasm).functions.map((f) => [f.name, f.type]));
    const files = await compileArtifacts(wasm, parsePluginConfig('schema_version: "1.0"'));
    const sandbox = createSandbox({ threads: 2 });
    const lanes = createLaneScheduler({ slots: 2, perTenantInFlight: 1, queueCap: 100_000 });
    const loaded = sandbox.load('noisy', files);
    const call = (tenant: string, fn: string, args: Record<string, unknown>) =>
      lanes.run(tenant, () => sandbox.invoke(loaded, { tenant, export: fn, signature: sig[fn]!, args, timeoutMs: 10_000 }));

    // Open loop on purpose: B sends at its own pace, so a stalled lane shows up as latency rather than fewer calls.
    const sparseB = async (label: string): Promise<Measured> => {
      const lat: number[] = [];
      let errors = 0;
      const start = performance.now();
      while (performance.now() - start < opts.seconds * opts.rounds * 1000 && !interruption.signal.aborted) {
        const t0 = performance.now();
        try {
          await call('B', 'add', { a: 1, b: 2 });
          lat.push(performance.now() - t0);
        } catch {
          errors++;
        }
        await sleep(SPARSE_GAP_MS);
      }
      const m = { label, ...summarize(lat, (performance.now() - start) / 1000, errors), errorKinds: {}, rounds: [], cpu: {} };
      status(`noisy-neighbor · ${label}: ${m.calls} calls, p99 ${m.p99.toFixed(3)} ms`);
      return m;
    };
    try {
      for (let i = 0; i < 20; i++) await call('B', 'add', { a: 0, b: 0 });
      const alone = await sparseB('B alone');
      let flooding = true;
      let aCalls = 0;
      const flood = Array.from({ length: FLOOD }, async () => {
        while (flooding) {
          await call('A', 'work', { n: 2_000_000 }).catch(() => undefined);
          aCalls++;
        }
      });
      await sleep(Math.max(100, opts.warmupSeconds * 1000));
      const noisy = await sparseB('B while A floods');
      flooding = false;
      await Promise.all(flood);
      const r = ratio(noisy.p99, alone.p99);
      return {
        title: "a sparse tenant's latency beside a flooding tenant",
        parameters: { ...runParameters(opts), 'in flight': `A ${FLOOD}, B 1 every ${SPARSE_GAP_MS} ms` },
        rows: [
          { ...alone, role: 'reference' },
          { ...noisy, role: 'ours', vs: alone.label, targets: [{ description: `p99 ≤ 2× ref (${r.toFixed(2)}×)`, met: r <= 2 }] },
        ],
        notes: [`A kept ${FLOOD} slow calls queued (${aCalls} completed); lanes: 2 slots, at most 1 per tenant; B calls every ${SPARSE_GAP_MS} ms, one at a time.`],
      };
    } finally {
      await sandbox.close();
    }
  },
};
