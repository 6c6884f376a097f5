import type { FuncType, ValType } from '../core/wasm/index.ts';
import type { JsonSchema } from '../tools/index.ts';

export type { JsonSchema };

const INT_RANGES: Record<string, [number | string, number | string]> = {
  s8: [-128, 127],
  u8: [0, 255],
  s16: [-32768, 32767],
  u16: [0, 65535],
  s32: [-2147483648, 2147483647],
  u32: [0, 4294967295],
};

/** Thrown for a type no JSON value can carry (resources, streams, futures): the tool is left out with a warning. */
export class UnmappableType extends Error {}

/**
 * Schema nodes the types of one function may expand to, and how deep. A component names a type once and refers to
 * it, so a few hundred bytes can describe a type whose tree has millions of nodes (a tuple of two of the previous
 * tuple, twenty times over): expanding it would stall the node.
 */
export const MAX_SCHEMA_NODES = 10_000;
export const MAX_SCHEMA_DEPTH = 64;

interface Budget {
  nodes: number;
}

/**
 * The JSON form of a WIT value: records and flags are objects, variants and results are `{tag, val}` (as jco
 * represents them), options are the value or null, `list<u8>` is base64 text, 64-bit integers are JSON integers
 * (converted to and from bigint at the call).
 */
export function toJsonSchema(t: ValType, budget: Budget = { nodes: 0 }, depth = 0): JsonSchema {
  if (++budget.nodes > MAX_SCHEMA_NODES) throw new UnmappableType(`its types expand to more than ${MAX_SCHEMA_NODES} schema nodes`);
  if (depth > MAX_SCHEMA_DEPTH) throw new UnmappableType(`its types nest deeper than ${MAX_SCHEMA_DEPTH} levels`);
  const sub = (v: ValType) => toJsonSchema(v, budget, depth + 1);
  const tagged = (tag: string, v: ValType | null): JsonSchema =>
    v === null
      ? { type: 'object', properties: { tag: { const: tag } }, required: ['tag'], additionalProperties: false }
      : { type: 'object', properties: { tag: { const: tag }, val: sub(v) }, required: ['tag', 'val'], additionalProperties: false };
  if (typeof t === 'string') {
    if (t in INT_RANGES) return { type: 'integer', minimum: INT_RANGES[t]![0], maximum: INT_RANGES[t]![1] };
    switch (t) {
      case 'bool':
        return { type: 'boolean' };
      case 's64':
        return { type: 'integer', minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER, format: 'int64' };
      case 'u64':
        return { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, format: 'uint64' };
      case 'f32':
      case 'f64':
        return { type: 'number' };
      case 'char':
        return { type: 'string', minLength: 1, maxLength: 1 };
      case 'string':
        return { type: 'string' };
      default:
        throw new UnmappableType(`type ${t} has no JSON form`);
    }
  }
  if ('list' in t) {
    if (t.list === 'u8') return { type: 'string', contentEncoding: 'base64' };
    const arr: JsonSchema = { type: 'array', items: sub(t.list) };
    return t.length === undefined ? arr : { ...arr, minItems: t.length, maxItems: t.length };
  }
  if ('record' in t) {
    return {
      type: 'object',
      properties: Object.fromEntries(t.record.map(([k, v]) => [k, sub(v)])),
      required: t.record.filter(([, v]) => !isOption(v)).map(([k]) => k),
      additionalProperties: false,
    };
  }
  if ('tuple' in t) return { type: 'array', items: t.tuple.map(sub), minItems: t.tuple.length, maxItems: t.tuple.length, additionalItems: false };
  if ('variant' in t) return { oneOf: t.variant.map(([name, v]) => tagged(name, v)) };
  if ('enum' in t) return { type: 'string', enum: t.enum };
  if ('flags' in t) {
    return { type: 'object', properties: Object.fromEntries(t.flags.map((f) => [f, { type: 'boolean' }])), additionalProperties: false };
  }
  if ('option' in t) {
    // null would mean both the outer and the inner none.
    if (isOption(t.option)) throw new UnmappableType('option<option<…>> has no unambiguous JSON form');
    return { anyOf: [sub(t.option), { type: 'null' }] };
  }
  if ('result' in t) return { oneOf: [tagged('ok', t.result.ok), tagged('err', t.result.err)] };
  throw new UnmappableType(`${Object.keys(t)[0]} values have no JSON form`);
}

const isOption = (t: ValType) => typeof t === 'object' && 'option' in t;

/** A tool's input: one property per parameter; parameters of option type may be left out. */
export function inputSchema(f: FuncType): JsonSchema {
  const budget = { nodes: 0 };
  return {
    type: 'object',
    properties: Object.fromEntries(f.params.map(([k, v]) => [k, toJsonSchema(v, budget, 1)])),
    required: f.params.filter(([, v]) => !isOption(v)).map(([k]) => k),
    additionalProperties: false,
  };
}

/** `{namespace}_{function}`, hyphens as underscores (a plugin `my-plugin` gives `my_plugin_{tool}`). */
export const toolName = (namespace: string, func: string) => `${namespace}_${func}`.replaceAll('-', '_');
