import { componentEmbed, componentNew, parse } from '@bytecodealliance/jco-transpile/wasm-tools';

/**
 * Builds a component at test time from WIT (and WAT for the core module, or a dummy core module generated from the
 * WIT alone when only the component's types matter). No binaries are committed.
 */
export async function buildComponent(opts: { wit: string; world: string; wat?: string }): Promise<Uint8Array> {
  const embedded = opts.wat
    ? await componentEmbed({ binary: await parse(opts.wat), witSource: opts.wit, world: opts.world })
    : await componentEmbed({ dummy: true, witSource: opts.wit, world: opts.world });
  return componentNew(embedded);
}

export const CALC_WIT = `package test:calc;
world calc {
  export add: func(a: s32, b: s32) -> s32;
}`;

export const CALC_WAT = `(module
  (memory (export "memory") 1)
  (func (export "add") (param i32 i32) (result i32) local.get 0 local.get 1 i32.add))`;
