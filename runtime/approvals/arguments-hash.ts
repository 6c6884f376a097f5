import { hash } from 'node:crypto';

/**
 * Canonical JSON of a call's arguments: object keys sorted by code unit, no whitespace, `undefined` members dropped
 * (as JSON.stringify does). Two calls with the same arguments in any key order hash alike, so a decision (and a gate's
 * approval) is bound to what the arguments say, not how they were written.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  // Built by appending (V8 joins such strings without copying) rather than through an array per object or array: a
  // call's arguments may hold 10,000 values, hashed on the node's thread.
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) {
      const v: unknown = value[i];
      out += (i === 0 ? '' : ',') + (v === undefined ? 'null' : canonicalJson(v));
    }
    return `${out}]`;
  }
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj);
  // Most clients write keys in one order throughout; only an object out of order is sorted.
  for (let i = 1; i < keys.length; i++) {
    if (keys[i - 1]! > keys[i]!) {
      keys.sort();
      break;
    }
  }
  let out = '{';
  for (const k of keys) {
    const v = obj[k];
    if (v === undefined) continue;
    out += (out.length === 1 ? '' : ',') + JSON.stringify(k) + ':' + canonicalJson(v);
  }
  return `${out}}`;
}

/**
 * `sha256:<hex>` of the arguments' canonical JSON (absent arguments hash as `{}`). Every tool call takes one (its
 * decision's record): the one-shot `hash` costs a third of a Hash object's create, update and digest for such input.
 */
export const argumentsHash = (args: unknown): string => `sha256:${hash('sha256', canonicalJson(args ?? {}), 'hex')}`;
