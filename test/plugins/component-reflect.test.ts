import { describe, expect, it } from 'vitest';
import { binaryKind, ComponentFormatError, reflectComponent } from '../../runtime/core/wasm/component-reflect.ts';
import { buildComponent, CALC_WAT, CALC_WIT } from '../helpers/components.ts';
import { parse } from '@bytecodealliance/jco-transpile/wasm-tools';

const RICH_WIT = `package acme:tools@1.2.0;
interface weather {
  enum units { metric, imperial }
  flags opts { wind, rain }
  record coords { lat: f64, lon: f64 }
  variant query { by-city(string), by-coords(coords), here }
  forecast: func(q: query, days: u8, units: units, o: opts) -> result<list<tuple<string, f32>>, string>;
  ints: func(a: s8, b: u8, c: s16, d: u16, e: s32, f: u32, g: s64, h: u64) -> option<u64>;
  misc: func(c: char, b: bool, bytes: list<u8>, maybe: option<string>) -> tuple<f64, bool>;
}
world plugin {
  import wasi:cli/environment@0.2.3;
  export weather;
  export ping: func() -> string;
}
package wasi:cli@0.2.3 {
  interface environment {
    get-environment: func() -> list<tuple<string, string>>;
  }
}`;

describe('component reflector', () => {
  it('tells components from core modules by their preamble', async () => {
    expect(binaryKind(await buildComponent({ wit: CALC_WIT, world: 'calc', wat: CALC_WAT }))).toBe('component');
    expect(binaryKind(await parse(CALC_WAT))).toBe('core-module');
    expect(binaryKind(new TextEncoder().encode('not wasm at all'))).toBe('unknown');
  });

  it('reads a root-world function with its types', async () => {
    const info = reflectComponent(await buildComponent({ wit: CALC_WIT, world: 'calc', wat: CALC_WAT }));
    expect(info).toEqual({ imports: [], functions: [{ name: 'add', interface: null, func: 'add', type: { params: [['a', 's32'], ['b', 's32']], result: 's32' } }] });
  });

  it('reads the functions of exported interfaces with every kind of value type, and the imports', async () => {
    const info = reflectComponent(await buildComponent({ wit: RICH_WIT, world: 'plugin' }));
    expect(info.imports).toEqual([{ name: 'wasi:cli/environment@0.2.3', sort: 'instance' }]);
    const byName = Object.fromEntries(info.functions.map((f) => [f.name, f]));
    expect(Object.keys(byName).sort()).toEqual(['acme:tools/weather@1.2.0#forecast', 'acme:tools/weather@1.2.0#ints', 'acme:tools/weather@1.2.0#misc', 'ping']);
    expect(byName['ping']!.type).toEqual({ params: [], result: 'string' });
    const forecast = byName['acme:tools/weather@1.2.0#forecast']!;
    expect(forecast.interface).toBe('acme:tools/weather@1.2.0');
    expect(forecast.func).toBe('forecast');
    expect(forecast.type).toEqual({
      params: [
        ['q', { variant: [['by-city', 'string'], ['by-coords', { record: [['lat', 'f64'], ['lon', 'f64']] }], ['here', null]] }],
        ['days', 'u8'],
        ['units', { enum: ['metric', 'imperial'] }],
        ['o', { flags: ['wind', 'rain'] }],
      ],
      result: { result: { ok: { list: { tuple: ['string', 'f32'] } }, err: 'string' } },
    });
    expect(byName['acme:tools/weather@1.2.0#ints']!.type).toEqual({
      params: [['a', 's8'], ['b', 'u8'], ['c', 's16'], ['d', 'u16'], ['e', 's32'], ['f', 'u32'], ['g', 's64'], ['h', 'u64']],
      result: { option: 'u64' },
    });
    expect(byName['acme:tools/weather@1.2.0#misc']!.type).toEqual({
      params: [['c', 'char'], ['b', 'bool'], ['bytes', { list: 'u8' }], ['maybe', { option: 'string' }]],
      result: { tuple: ['f64', 'bool'] },
    });
  });

  it('fails closed on garbage, core modules and truncated components', async () => {
    const comp = await buildComponent({ wit: CALC_WIT, world: 'calc', wat: CALC_WAT });
    expect(() => reflectComponent(new Uint8Array([1, 2, 3]))).toThrow(ComponentFormatError);
    expect(() => reflectComponent(new Uint8Array(comp.subarray(0, comp.length - 7)))).toThrow(ComponentFormatError);
  });
});
