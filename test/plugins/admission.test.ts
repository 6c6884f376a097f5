import { Ajv } from 'ajv';
import { parse } from '@bytecodealliance/jco-transpile/wasm-tools';
import { describe, expect, it } from 'vitest';
import { admitComponent, toJsonSchema } from '../../runtime/plugins/index.ts';
import type { PlatformError } from '../../runtime/index.ts';
import { MAX_SCHEMA_NODES } from '../../runtime/plugins/tool-schema.ts';
import { MAX_COMPONENT_NESTING } from '../../runtime/core/wasm/component-reflect.ts';
import { buildComponent, CALC_WAT, CALC_WIT } from '../helpers/components.ts';

const ajv = new Ajv({ strict: false });
const valid = (schema: object, value: unknown) => ajv.validate(schema, value);
const failure = (f: () => unknown) => {
  try {
    f();
  } catch (err) {
    return `${(err as PlatformError).code}: ${(err as Error).message}`;
  }
  return 'admitted';
};

const TOOLS_WIT = `package acme:tools@1.0.0;
interface text {
  /// Turns text upside down.
  /// Works with any script.
  flip: func(s: string) -> string;
  shout: func(s: string, times: option<u8>) -> string;
}
world plugin {
  import wasi:random/random@0.2.3;
  export text;
  /// Greets a person by name.
  export greet-person: func(name: string) -> string;
}
package wasi:random@0.2.3 {
  interface random { get-random-u64: func() -> u64; }
}`;

describe('admission', () => {
  it('admits a component and names its tools {namespace}_{function}, hyphens as underscores, with WIT descriptions', async () => {
    const a = admitComponent(await buildComponent({ wit: TOOLS_WIT, world: 'plugin' }), 'my-plugin', [TOOLS_WIT]);
    expect(a.imports).toEqual(['wasi:random/random@0.2.3']);
    const byName = Object.fromEntries(a.tools.map((t) => [t.name, t]));
    expect(Object.keys(byName).sort()).toEqual(['my_plugin_flip', 'my_plugin_greet_person', 'my_plugin_shout']);
    expect(byName['my_plugin_flip']!.description).toBe('Turns text upside down. Works with any script.');
    expect(byName['my_plugin_flip']!.export).toBe('acme:tools/text@1.0.0#flip');
    expect(byName['my_plugin_greet_person']!.description).toBe('Greets a person by name.');
    expect(byName['my_plugin_shout']!.inputSchema).toEqual({
      type: 'object',
      properties: { s: { type: 'string' }, times: { anyOf: [{ type: 'integer', minimum: 0, maximum: 255 }, { type: 'null' }] } },
      required: ['s'],
      additionalProperties: false,
    });
    expect(a.warnings).toEqual(['acme:tools/text@1.0.0#shout: no description (add a /// doc comment in the archive\'s .wit)']);
  });

  it('rejects a core module with a message that says so, and garbage', async () => {
    expect(failure(() => admitComponent(new Uint8Array([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0]), 'x', []))).toMatch(/PLUGIN_WASM_INVALID: .*core WebAssembly module, not a component/);
    const core = await parse(CALC_WAT);
    expect(failure(() => admitComponent(core, 'x', []))).toMatch(/core WebAssembly module/);
    expect(failure(() => admitComponent(new TextEncoder().encode('hello'), 'x', []))).toMatch(/not a WebAssembly binary/);
  });

  it('rejects an import outside the allowed prefixes, naming it', async () => {
    const wit = `package acme:bad;
world plugin {
  import acme:secrets/vault@1.0.0;
  export f: func() -> u32;
}
package acme:secrets@1.0.0 { interface vault { read: func(k: string) -> string; } }`;
    const c = await buildComponent({ wit, world: 'plugin' });
    expect(failure(() => admitComponent(c, 'bad', []))).toBe(
      'PLUGIN_WASM_INVALID: failed WASM validation: import not allowed: acme:secrets/vault@1.0.0 (allowed: wasi:clocks/, wasi:random/, wasi:cli/, wasi:sockets/, wasi:io/, wasi:filesystem/, wasi:http/, wasi:config/, wasi:keyvalue/)',
    );
  });

  it('admits type-only imports: a world-level type carries no capability', async () => {
    const wit = `package acme:geo;
world plugin {
  record point { x: u32, y: u32 }
  export norm: func(p: point) -> u32;
}`;
    const a = admitComponent(await buildComponent({ wit, world: 'plugin' }), 'geo', []);
    expect(a.imports).toEqual(['point']);
    expect(a.tools.map((t) => t.name)).toEqual(['geo_norm']);
  });

  it('rejects a component that exports no callable function', async () => {
    const wit = `package acme:none;
world plugin { import wasi:random/random@0.2.3; }
package wasi:random@0.2.3 { interface random { get-random-u64: func() -> u64; } }`;
    expect(failure(() => admitComponent(new Uint8Array(0), 'x', []))).toMatch(/not a WebAssembly binary/);
    const c = await buildComponent({ wit, world: 'plugin' });
    expect(failure(() => admitComponent(c, 'none', []))).toBe('PLUGIN_WASM_INVALID: failed WASM validation: the component exports no callable function');
  });

  it('refuses types that expand past the schema budget (a few hundred bytes naming millions of nodes), quickly', async () => {
    // tuple<t, t> of the previous tuple, d times: 2^(d+1) - 1 tuples and 2^(d+1) integers, one schema node each.
    const bomb = async (d: number) => {
      const types = ['(type $t0 (tuple u8 u8))'];
      for (let i = 1; i <= d; i++) types.push(`(type $t${i} (tuple $t${i - 1} $t${i - 1}))`);
      return parse(`(component ${types.join(' ')} (type $f (func (param "x" $t${d}))) (import "wasi:cli/x" (func $g (type $f))) (export "f" (func $g)))`);
    };
    // Depth 11: 8,191 nodes, within the budget.
    const fits = admitComponent(await bomb(11), 'fits', []);
    expect(JSON.stringify(fits.tools[0]!.inputSchema).length).toBeGreaterThan(100_000);
    // Depth 12 needs 16,383 nodes; depth 21, four million: both refused in milliseconds, naming the limit.
    for (const d of [12, 21]) {
      const t0 = performance.now();
      const bin = await bomb(d);
      expect(failure(() => admitComponent(bin, 'bomb', []))).toMatch(new RegExp(`no exported function can be called with JSON \\(f: skipped, its types expand to more than ${MAX_SCHEMA_NODES} schema nodes\\)`));
      expect(performance.now() - t0).toBeLessThan(1_000);
    }
  });

  it('refuses components nested past the limit, and nesting too deep to read, as failed validation', async () => {
    const leb = (n: number) => {
      const out: number[] = [];
      do {
        let b = n & 0x7f;
        n >>>= 7;
        if (n) b |= 0x80;
        out.push(b);
      } while (n);
      return out;
    };
    const PREAMBLE = [0x00, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00];
    const nested = (levels: number) => {
      let body: number[] = [];
      for (let i = 0; i < levels; i++) {
        const inner = [...PREAMBLE, ...body];
        body = [0x04, ...leb(inner.length), ...inner];
      }
      return new Uint8Array([...PREAMBLE, ...body]);
    };
    // At the limit the nesting is read (and refused only for exporting nothing); one more level is refused as such.
    expect(failure(() => admitComponent(nested(MAX_COMPONENT_NESTING), 'n', []))).toMatch(/exports no callable function/);
    expect(failure(() => admitComponent(nested(MAX_COMPONENT_NESTING + 1), 'n', []))).toMatch(/PLUGIN_WASM_INVALID: .*components nest deeper than 32 levels/);
    expect(failure(() => admitComponent(nested(2_000), 'n', []))).toMatch(/PLUGIN_WASM_INVALID: .*components nest deeper/);
  });

  it('admits the calc component with an add tool', async () => {
    const a = admitComponent(await buildComponent({ wit: CALC_WIT, world: 'calc', wat: CALC_WAT }), 'calc', []);
    expect(a.tools.map((t) => t.name)).toEqual(['calc_add']);
  });
});

describe('WIT types as JSON Schema', () => {
  it('bounds every integer width at both edges', () => {
    const cases: [string, number, number][] = [['s8', -128, 127], ['u8', 0, 255], ['s16', -32768, 32767], ['u16', 0, 65535], ['s32', -2147483648, 2147483647], ['u32', 0, 4294967295]];
    for (const [t, lo, hi] of cases) {
      const s = toJsonSchema(t);
      expect([valid(s, lo), valid(s, hi), valid(s, lo - 1), valid(s, hi + 1), valid(s, 1.5)], t).toEqual([true, true, false, false, false]);
    }
    expect(valid(toJsonSchema('u64'), Number.MAX_SAFE_INTEGER)).toBe(true);
    expect(valid(toJsonSchema('u64'), -1)).toBe(false);
    expect(valid(toJsonSchema('s64'), Number.MIN_SAFE_INTEGER)).toBe(true);
  });

  it('maps records, variants, enums, flags, options, results, lists, tuples, chars and bytes', () => {
    const rec = toJsonSchema({ record: [['lat', 'f64'], ['note', { option: 'string' }]] });
    expect(valid(rec, { lat: 1.5 })).toBe(true);
    expect(valid(rec, { lat: 1.5, extra: 1 })).toBe(false);
    const variant = toJsonSchema({ variant: [['by-city', 'string'], ['here', null]] });
    expect(valid(variant, { tag: 'by-city', val: 'Oslo' })).toBe(true);
    expect(valid(variant, { tag: 'here' })).toBe(true);
    expect(valid(variant, { tag: 'by-city' })).toBe(false);
    expect(valid(toJsonSchema({ enum: ['metric', 'imperial'] }), 'metric')).toBe(true);
    expect(valid(toJsonSchema({ enum: ['metric', 'imperial'] }), 'kelvin')).toBe(false);
    expect(valid(toJsonSchema({ flags: ['wind', 'rain'] }), { wind: true })).toBe(true);
    expect(valid(toJsonSchema({ flags: ['wind', 'rain'] }), { snow: true })).toBe(false);
    expect(valid(toJsonSchema({ option: 'u8' }), null)).toBe(true);
    expect(valid(toJsonSchema({ result: { ok: 'u8', err: 'string' } }), { tag: 'err', val: 'x' })).toBe(true);
    expect(valid(toJsonSchema({ list: { tuple: ['string', 'f32'] } }), [['a', 1]])).toBe(true);
    expect(valid(toJsonSchema({ tuple: ['string', 'f32'] }), ['a', 1, 2])).toBe(false);
    expect(valid(toJsonSchema('char'), 'é')).toBe(true);
    expect(valid(toJsonSchema('char'), 'ab')).toBe(false);
    expect(toJsonSchema({ list: 'u8' })).toEqual({ type: 'string', contentEncoding: 'base64' });
    expect(() => toJsonSchema({ resource: 'own' })).toThrow(/no JSON form/);
    // null cannot tell an outer none from an inner one: such a tool is left out with a warning.
    expect(() => toJsonSchema({ option: { option: 'u8' } })).toThrow(/no unambiguous JSON form/);
    expect(valid(toJsonSchema({ option: { list: { option: 'u8' } } }), [1, null])).toBe(true);
  });
});
