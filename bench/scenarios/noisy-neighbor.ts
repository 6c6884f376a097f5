import { setTimeout as sleep } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import { compileArtifacts, createLaneScheduler, createSandbox, parsePluginConfig, reflectComponent } from '../../runtime/index.ts';
import { buildComponent } from '../../test/helpers/components.ts';
import { percentile, type RunResult } from '../load.ts';
import type { Report } from '../report.ts';

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

/** Tenant B's sparse fast calls, alone and while tenant A floods its lane with slow calls. */
export async function noisyNeighbor(seconds: number): Promise<Report> {
  const wasm = await buildComponent({ wit: WIT, world: 'work', wat: WAT });
  const sig = Object.fromEntries(reflectComponent(wasm).functions.map((f) => [f.name, f.type]));
  const files = await compileArtifacts(wasm, parsePluginConfig('schema_version: "1.0"'));
  const sandbox = createSandbox({ minThreads: 2, maxThreads: 2 });
  const lanes = createLaneScheduler({ slots: 2, perTenantInFlight: 1, queueCap: 100_000 });
  const loaded = sandbox.load('noisy', files);
  const call = (tenant: string, fn: string, args: Record<string, unknown>) =>
    lanes.run(tenant, () => sandbox.invoke(loaded, { export: fn, signature: sig[fn]!, args, env: [], timeoutMs: 10_000 }));

  const sparseB = async (label: string): Promise<RunResult> => {
    const lat: number[] = [];
    const start = performance.now();
    while (performance.now() - start < seconds * 1000) {
      const t0 = performance.now();
      await call('B', 'add', { a: 1, b: 2 });
      lat.push(performance.now() - t0);
      await sleep(10);
    }
    lat.sort((a, b) => a - b);
    const secs = (performance.now() - start) / 1000;
    return { label, calls: lat.length, errors: 0, seconds: secs, throughput: lat.length / secs, p50: percentile(lat, 0.5), p90: percentile(lat, 0.9), p99: percentile(lat, 0.99), max: lat.at(-1) ?? 0 };
  };
  try {
    await call('B', 'add', { a: 0, b: 0 });
    const alone = await sparseB('B alone');
    let flooding = true;
    let aCalls = 0;
    const flood = Array.from({ length: 200 }, async () => {
      while (flooding) {
        await call('A', 'work', { n: 2_000_000 }).catch(() => undefined);
        aCalls++;
      }
    });
    await sleep(100);
    const noisy = await sparseB('B while A floods');
    flooding = false;
    await Promise.all(flood);
    const ratio = noisy.p99 / alone.p99;
    return {
      scenario: 'noisy-neighbor',
      rows: [
        { ...noisy, role: 'ours' },
        { ...alone, role: 'reference' },
      ],
      ratios: [{ name: "B's p99 with A flooding / alone", value: ratio }],
      targets: [{ description: `B's p99 ≤ 2× its p99 alone (${ratio.toFixed(2)}×)`, met: ratio <= 2 }],
      notes: [`A kept 200 slow calls queued (${aCalls} completed); lanes: 2 slots, at most 1 per tenant; B calls every 10 ms.`],
    };
  } finally {
    await sandbox.close();
  }
}
