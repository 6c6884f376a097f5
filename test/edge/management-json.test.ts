import { describe, expect, it } from 'vitest';
import { MANAGEMENT_MAX_KEYS, MANAGEMENT_MAX_VALUES, MAX_DEPTH, parseManagementBody, restoreLifted } from '../../edge/http/index.ts';
import { parseManagementBodyInWorker } from '../../edge/http/json-body.ts';

const bytes = (text: string) => Buffer.from(text);
/** One object with `n` keys. */
const keys = (n: number) => `{${Array.from({ length: n }, (_, i) => `"k${i}":0`).join(',')}}`;

/** Parsed where it arrives, and in a worker's way (lifted and restored): both must agree. */
function both(text: string) {
  const inline = parseManagementBody(bytes(text));
  const lifted = parseManagementBodyInWorker(bytes(text));
  const worker = lifted.ok ? { ok: true, value: restoreLifted(lifted) } : lifted;
  expect(worker).toEqual(inline);
  return inline;
}

describe('management JSON bodies', () => {
  it('[MGMT-ERR-03] [MGMT-ERR-04] object keys are counted in all, nested ones included, and refused past the limit', () => {
    expect(both(keys(MANAGEMENT_MAX_KEYS)).ok).toBe(true);
    expect(both(keys(MANAGEMENT_MAX_KEYS + 1))).toEqual({ ok: false, reason: 'keys' });
    // Spread over many objects: the keys of the outer array's objects count together.
    const spread = (n: number) => `[${Array.from({ length: n }, (_, i) => `{"a":${i}}`).join(',')}]`;
    expect(both(spread(MANAGEMENT_MAX_KEYS)).ok).toBe(true);
    expect(both(spread(MANAGEMENT_MAX_KEYS + 1))).toEqual({ ok: false, reason: 'keys' });
  });

  it('[MGMT-ERR-03] values and levels at both edges; bad JSON', () => {
    const numbers = (n: number) => `[${Array.from({ length: n - 1 }, () => '0').join(',')}]`;
    expect(both(numbers(MANAGEMENT_MAX_VALUES)).ok).toBe(true);
    expect(both(numbers(MANAGEMENT_MAX_VALUES + 1))).toEqual({ ok: false, reason: 'values' });
    const nested = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
    expect(both(nested(MAX_DEPTH)).ok).toBe(true);
    expect(both(nested(MAX_DEPTH + 1))).toEqual({ ok: false, reason: 'depth' });
    for (const bad of ['', '{', '{"a":1,}', 'nul']) expect(both(bad), JSON.stringify(bad)).toEqual({ ok: false, reason: 'json' });
  });

  it('[MGMT-ERR-03] a key that could poison a prototype is refused at any depth; the same names as data are not', () => {
    for (const bad of ['{"__proto__":{"admin":true}}', '{"a":[{"b":{"__proto__":null}}]}', '{"constructor":{"prototype":{"admin":true}}}', '[{"x":{"constructor":{"prototype":1}}}]', '{"\\u005f_proto__":{"admin":true}}', '{"c\\u006fnstructor":{"prototype":{}}}']) {
      expect(both(bad), bad).toEqual({ ok: false, reason: 'proto' });
    }
    for (const fine of ['{"constructor":"x"}', '{"constructor":{"name":"p"}}', '{"text":"__proto__ and constructor.prototype"}', '["__proto__"]']) {
      expect(both(fine), fine).toEqual({ ok: true, value: JSON.parse(fine) });
    }
  });

  it('[MGMT-ERR-03] long strings come back whole from the worker, in their place', () => {
    const long = 'é'.repeat(70_000);
    const body = JSON.stringify({ files: [{ path: 'SKILL.md', content: long }, { path: 'b', content: 'x'.repeat(65_536) }] });
    const r = parseManagementBodyInWorker(bytes(body));
    expect(r.ok && r.lifted.length).toBe(2);
    expect(r.ok && restoreLifted(r)).toEqual(JSON.parse(body));
  });
});
