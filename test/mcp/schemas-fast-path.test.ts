import { CallToolRequestParamsSchema } from '@modelcontextprotocol/core';
import { describe, expect, it } from 'vitest';
import { plainCall, plainRequest, RequestSchema } from '../../edge/mcp/schemas.ts';

/** Every combination of the members below: the fast path may take fewer messages than the schema, never more. */
function* combinations(parts: Record<string, unknown[]>): Generator<Record<string, unknown>> {
  const keys = Object.keys(parts);
  const at = (i: number, acc: Record<string, unknown>): Generator<Record<string, unknown>> =>
    (function* () {
      if (i === keys.length) return yield { ...acc };
      for (const v of parts[keys[i]!]!) yield* at(i + 1, v === ABSENT ? acc : { ...acc, [keys[i]!]: v });
    })();
  yield* at(0, {});
}
const ABSENT = Symbol('absent');
const json = (s: string) => JSON.parse(s) as Record<string, unknown>;

const CALL_PARAMS = [
  ABSENT, {}, [], null, 'x', 7,
  { name: 'a' }, { name: 'a', arguments: {} }, { name: 'a', arguments: { x: [1, { y: null }] } },
  { name: 'a', arguments: [] }, { name: 'a', arguments: null }, { name: 'a', arguments: 'x=1' }, { name: 7 }, { arguments: {} },
  { name: 'a', extra: 1 }, { name: 'a', task: {} }, { name: 'a', task: 1 }, { name: 'a', _meta: {} }, { name: 'a', _meta: { progressToken: 1.5 } },
  json('{"name":"a","__proto__":{"x":1}}'), json('{"name":"a","arguments":{"__proto__":1}}'),
];

describe('MCP message schemas: the fast path for common requests', () => {
  it('takes a request envelope only when the SDK schema takes it too, and takes the common ones', () => {
    let fast = 0;
    let schema = 0;
    const parts = {
      jsonrpc: ['2.0', '1.0', 2, null, ABSENT],
      id: ['a', '', 1, -0, 1.5, Number.POSITIVE_INFINITY, Number.NaN, null, true, {}, ABSENT],
      method: ['tools/call', 'x', 7, null, ABSENT],
      params: CALL_PARAMS,
    };
    for (const base of combinations(parts)) {
      for (const m of [base, { ...base, extra: 1 }, { ...base, ...json('{"__proto__":{"jsonrpc":"2.0"}}') }]) {
        const takes = RequestSchema.safeParse(m).success;
        if (takes) schema++;
        if (!plainRequest(m)) continue;
        fast++;
        expect(takes, JSON.stringify(m)).toBe(true);
      }
    }
    // The common requests go the fast way: 5 finite ids × 2 string methods × 15 params that are absent or objects without _meta.
    expect(plainRequest({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'a', arguments: {} } })).toBe(true);
    expect(plainRequest({ jsonrpc: '2.0', id: 'x', method: 'tools/list' })).toBe(true);
    expect(fast).toBe(5 * 2 * 15);
    expect(schema).toBeGreaterThan(fast);
  });

  it('takes tools/call params only when the SDK schema takes them too, and takes the common ones', () => {
    let fast = 0;
    for (const p of CALL_PARAMS) {
      if (p === ABSENT || typeof p !== 'object' || p === null) continue;
      const takes = CallToolRequestParamsSchema.safeParse(p).success;
      if (!plainCall(p as Record<string, unknown>)) continue;
      fast++;
      expect(takes, JSON.stringify(p)).toBe(true);
    }
    expect(fast).toBe(4);
  });
});
