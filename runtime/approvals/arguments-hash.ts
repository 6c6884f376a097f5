import { hash } from 'node:crypto';

/**
 * Canonical JSON of a call's arguments: object keys sorted by code unit, no whitespace, `undefined` members dropped
 * (as JSON.stringify does). Two calls with the same arguments in any key order hash alike, so a decision (and a gate's
 * approval) is bound to what the arguments say, not how they were written.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj)
    .filter((k) => obj[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`).join(',')}}`;
}

/**
 * `sha256:<hex>` of the arguments' canonical JSON (absent arguments hash as `{}`). Every tool call takes one (its
 * decision's record): the one-shot `hash` costs a third of a Hash object's create, update and digest for such input.
 */
export const argumentsHash = (args: unknown): string => `sha256:${hash('sha256', canonicalJson(args ?? {}), 'hex')}`;
