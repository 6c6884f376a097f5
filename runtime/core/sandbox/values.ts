import type { ValType } from '../wasm/index.ts';

/**
 * JSON values (as the tool's JSON Schema describes them) to the JS values jco's bindings take, and back. jco
 * camelCases record fields and flag names, keeps variant and enum tags as written, maps options to a value or
 * undefined, list<u8> to Uint8Array and 64-bit integers to bigint.
 */
export const camel = (s: string) => s.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());

export function toGuest(v: unknown, t: ValType): unknown {
  if (typeof t === 'string') {
    if (t === 's64' || t === 'u64') return BigInt(v as number);
    return v;
  }
  if ('list' in t) {
    if (t.list === 'u8') return new Uint8Array(Buffer.from(v as string, 'base64'));
    return (v as unknown[]).map((x) => toGuest(x, t.list));
  }
  if ('record' in t) {
    const o = v as Record<string, unknown>;
    return Object.fromEntries(t.record.map(([k, ft]) => [camel(k), o[k] === undefined || o[k] === null ? (isOption(ft) ? undefined : o[k]) : toGuest(o[k], ft)]));
  }
  if ('tuple' in t) return (v as unknown[]).map((x, i) => toGuest(x, t.tuple[i]!));
  if ('variant' in t) {
    const { tag, val } = v as { tag: string; val?: unknown };
    const ct = t.variant.find(([n]) => n === tag)?.[1] ?? null;
    return ct === null ? { tag } : { tag, val: toGuest(val, ct) };
  }
  if ('flags' in t) {
    const o = v as Record<string, boolean>;
    return Object.fromEntries(t.flags.map((f) => [camel(f), Boolean(o[f])]));
  }
  if ('option' in t) return v === null || v === undefined ? undefined : toGuest(v, t.option);
  if ('result' in t) {
    const { tag, val } = v as { tag: 'ok' | 'err'; val?: unknown };
    const rt = tag === 'ok' ? t.result.ok : t.result.err;
    return rt === null ? { tag } : { tag, val: toGuest(val, rt) };
  }
  return v;
}

export function fromGuest(v: unknown, t: ValType): unknown {
  if (typeof t === 'string') {
    if (typeof v === 'bigint') return Number.isSafeInteger(Number(v)) ? Number(v) : v.toString();
    return v;
  }
  if ('list' in t) {
    if (t.list === 'u8') return Buffer.from(v as Uint8Array).toString('base64');
    return (v as unknown[]).map((x) => fromGuest(x, t.list));
  }
  if ('record' in t) {
    const o = v as Record<string, unknown>;
    return Object.fromEntries(t.record.map(([k, ft]) => [k, fromGuest(o[camel(k)], ft)]));
  }
  if ('tuple' in t) return (v as unknown[]).map((x, i) => fromGuest(x, t.tuple[i]!));
  if ('variant' in t) {
    const { tag, val } = v as { tag: string; val?: unknown };
    const ct = t.variant.find(([n]) => n === tag)?.[1] ?? null;
    return ct === null ? { tag } : { tag, val: fromGuest(val, ct) };
  }
  if ('flags' in t) {
    const o = v as Record<string, boolean>;
    return Object.fromEntries(t.flags.map((f) => [f, Boolean(o[camel(f)])]));
  }
  if ('option' in t) return v === undefined || v === null ? null : fromGuest(v, t.option);
  if ('result' in t) {
    const { tag, val } = v as { tag: 'ok' | 'err'; val?: unknown };
    const rt = tag === 'ok' ? t.result.ok : t.result.err;
    return rt === null ? { tag } : { tag, val: fromGuest(val, rt) };
  }
  return v;
}

const isOption = (t: ValType) => typeof t === 'object' && 'option' in t;
