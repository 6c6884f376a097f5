import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileArtifacts, parsePluginConfig, reflectComponent } from '../../runtime/plugins/index.ts';
import { createSandbox, type LoadedArtifacts, type Sandbox } from '../../runtime/sandbox/index.ts';
import { buildComponent } from '../helpers/components.ts';

const WIT = `package test:hostile;
world hostile {
  import wasi:cli/exit@0.2.3;
  export add: func(a: s32, b: s32) -> s32;
  export spin: func();
  export grow: func(pages: s32) -> s32;
  export quit: func();
  export wide: func(a: u64) -> u64;
}
package wasi:cli@0.2.3 { interface exit { exit: func(status: result); } }`;

const WAT = `(module
  (import "wasi:cli/exit@0.2.3" "exit" (func $exit (param i32)))
  (memory (export "memory") 1)
  (func (export "add") (param i32 i32) (result i32) local.get 0 local.get 1 i32.add)
  (func (export "spin") (loop $l (br $l)))
  (func (export "grow") (param i32) (result i32) local.get 0 memory.grow)
  (func (export "quit") i32.const 1 call $exit)
  (func (export "wide") (param i64) (result i64) local.get 0 i64.const 1 i64.add))`;

describe('sandbox (Piscina workers)', () => {
  let sandbox: Sandbox;
  let loaded: LoadedArtifacts;
  let sig: Record<string, ReturnType<typeof reflectComponent>['functions'][number]['type']>;
  const call = (fn: string, args: Record<string, unknown> = {}, timeoutMs = 1_000) =>
    sandbox.invoke(loaded, { export: fn, signature: sig[fn]!, args, env: [], timeoutMs });

  beforeAll(async () => {
    const wasm = await buildComponent({ wit: WIT, world: 'hostile', wat: WAT });
    sig = Object.fromEntries(reflectComponent(wasm).functions.map((f) => [f.name, f.type]));
    const files = await compileArtifacts(wasm, parsePluginConfig('schema_version: "1.0"\nresources: { limits: { memory: 128Ki } }'));
    sandbox = createSandbox({ minThreads: 1, maxThreads: 2 });
    loaded = sandbox.load('hostile-1', files);
  }, 60_000);
  afterAll(() => sandbox?.close());

  it('calls an export and maps the result back to JSON', async () => {
    expect(await call('add', { a: 2, b: 40 })).toEqual({ ok: true, value: 42 });
    expect(await call('wide', { a: 2 ** 40 })).toEqual({ ok: true, value: 2 ** 40 + 1 });
  });

  it('stops an infinite loop at its timeout and keeps serving other calls', async () => {
    const t0 = Date.now();
    const spin = await call('spin', {}, 300);
    expect(spin).toMatchObject({ ok: false, kind: 'timeout' });
    expect(Date.now() - t0).toBeLessThan(2_000);
    expect(await call('add', { a: 1, b: 1 })).toEqual({ ok: true, value: 2 });
  });

  it('holds wasm memory to the version limit: growth past it fails inside the plugin', async () => {
    // 128Ki = 2 pages; the module starts with 1, so growing by 2 passes the cap on any instance.
    expect(await call('grow', { pages: 2 })).toEqual({ ok: true, value: -1 });
    expect(await call('grow', { pages: 100 })).toEqual({ ok: true, value: -1 });
    expect((await call('grow', { pages: 0 })) as { value: number }).toMatchObject({ ok: true });
  });

  it('an exit call cannot end the worker', async () => {
    expect(await call('quit')).toMatchObject({ ok: false, kind: 'exit' });
    expect(await call('add', { a: 3, b: 4 })).toEqual({ ok: true, value: 7 });
  });
});
