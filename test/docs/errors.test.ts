import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { A2A_WIRE, KIND_WIRE } from '../../edge/a2a/index.ts';
import { MCP_HTTP_ERRORS } from '../../edge/mcp/index.ts';
import { ERRORS, ERROR_KINDS, PlatformError, asPlatformError, fromWire } from '../../runtime/index.ts';
import { ROOT } from '../helpers/cli.ts';

const doc = readFileSync(path.join(ROOT, 'docs/errors.md'), 'utf8');
const rows = (re: RegExp) => [...doc.matchAll(re)].map((m) => m.slice(1));

describe('error codes', () => {
  it('docs/errors.md lists every code of the registry, in order, with its kind and fix, and no other', () => {
    const documented = rows(/^\| `([A-Z0-9_]+)` \| ([a-z_]+) \| (.*) \|$/gm);
    expect(documented).toEqual(Object.entries(ERRORS).map(([code, e]) => [code, e.kind, e.fix.replaceAll('|', '\\|')]));
  });

  it('docs/errors.md lists every MCP transport error with its status and JSON-RPC code', () => {
    const documented = rows(/^\| `(MCP_[A-Z_]+)` \| (\d+) \| (-?\d+) \| (.*) \|$/gm);
    expect(documented).toEqual(Object.entries(MCP_HTTP_ERRORS).map(([code, e]) => [code, String(e.status), String(e.rpc), e.fix]));
  });

  it('docs/errors.md lists the agent gateway wire of every A2A code, and every A2A code is mapped', () => {
    const documented = rows(/^\| `([A-Z0-9_]+)` \| (\d{3}) \| (-\d+) \| ([A-Z_]+) \|$/gm);
    expect(documented).toEqual(Object.entries(A2A_WIRE).map(([code, w]) => [code, String(w.status), String(w.rpc), w.reason]));
    expect(Object.keys(ERRORS).filter((c) => c.startsWith('A2A_')).every((c) => Object.hasOwn(A2A_WIRE, c))).toBe(true);
  });

  it("the agent gateway column of the kinds table is the surface's mapping by kind", () => {
    const documented = rows(/^\| ([a-z_]+) \| [^|]+ \| [^|]+ \| (-\d+)[^|]* \| [^|]+ \|$/gm);
    expect(documented).toEqual(ERROR_KINDS.map((kind) => [kind, String(KIND_WIRE[kind].rpc)]));
  });

  it('every kind has a row in the wire table', () => {
    for (const kind of ERROR_KINDS) expect(doc).toMatch(new RegExp(`^\\| ${kind} \\|`, 'm'));
  });

  it('a PlatformError crosses a JSON boundary and comes back the same; unknown errors become PLT_INTERNAL', () => {
    const e = new PlatformError('PLT_LANE_OVERLOADED', 'full', { data: { retryAfterSeconds: 1 } });
    const back = fromWire(JSON.parse(JSON.stringify(e.toWire())));
    expect(back).toBeInstanceOf(PlatformError);
    expect(back).toMatchObject({ code: 'PLT_LANE_OVERLOADED', kind: 'overloaded', message: 'full', data: { retryAfterSeconds: 1 } });
    expect(fromWire({ code: 'NOT_A_CODE', message: 'x' })).toMatchObject({ code: 'PLT_REMOTE_ERROR', kind: 'internal' });
    expect(asPlatformError(new TypeError('boom'))).toMatchObject({ code: 'PLT_INTERNAL', kind: 'internal' });
    // Errors of the store carry registered codes without depending on the runtime: they map to their kind.
    expect(asPlatformError(Object.assign(new Error('stale'), { code: 'PLT_STORE_CONFLICT' }))).toMatchObject({ code: 'PLT_STORE_CONFLICT', kind: 'conflict', message: 'stale' });
  });
});
