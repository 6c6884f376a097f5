import { describe, expect, it } from 'vitest';
import { instantOf } from '../../runtime/index.ts';
// @ts-expect-error the sandbox threads' modules are plain JavaScript (worker threads do not load TypeScript)
import { compileGlob } from '../../runtime/core/sandbox/fs-glob.mjs';

const match = compileGlob as (glob: string) => (path: string) => boolean;

describe('filesystem grant globs', () => {
  it('[CAP-11] * and ? stay within a segment, ** crosses them, **/ may match no segment, dir/** names dir too', () => {
    const cases: [string, string, boolean][] = [
      ['data/**', 'data', true],
      ['data/**', 'data/', true],
      ['data/**', 'data/a/b.txt', true],
      ['data/**', 'database', false],
      ['data/**', 'dat', false],
      ['out/*.txt', 'out/a.txt', true],
      ['out/*.txt', 'out/.txt', true],
      ['out/*.txt', 'out/a/b.txt', false],
      ['out/*.txt', 'out/a.txt.bak', false],
      ['out/?.txt', 'out/a.txt', true],
      ['out/?.txt', 'out/ab.txt', false],
      ['a?c', 'a/c', false],
      ['**/x.log', 'x.log', true],
      ['**/x.log', 'a/b/x.log', true],
      ['**/x.log', 'ax.log', false],
      ['a/**/z', 'a/z', true],
      ['a/**/z', 'a/b/c/z', true],
      ['a/**/z', 'a/bz', false],
      ['a**', 'a/b', true],
      // Every other character is itself, the ones a regular expression would read too.
      ['c++/(x)|[y].$', 'c++/(x)|[y].$', true],
      ['c++/(x)|[y].$', 'cc/x', false],
      // The directory a `dir/**` names is matched as a glob, not as a pattern: `a*` is not "any number of a".
      ['a*/**', 'abc', true],
      ['a*/**', '', false],
      ['a*/**', 'b', false],
      ['', '', true],
      ['', 'a', false],
    ];
    for (const [glob, path, want] of cases) expect(match(glob)(path), `${glob} ~ ${path}`).toBe(want);
  });

  it('[CAP-11] a hostile glob matches in linear steps: 250 stars against a 4 KiB path that almost matches', () => {
    // As a regular expression, `*a*a*a…` against a run of a's with no ending backtracks exponentially.
    const glob = '*a'.repeat(250);
    const path = `${'a'.repeat(4096)}/`;
    const t0 = performance.now();
    expect(match(glob)(path)).toBe(false);
    expect(match(`**${'a**'.repeat(160)}b`)(`${'a/'.repeat(2048)}`)).toBe(false);
    expect(match(glob)('a'.repeat(4096))).toBe(true);
    // Bounded by path × glob (about 2 million steps a call), far under a sandbox call's time limit.
    expect(performance.now() - t0).toBeLessThan(2_000);
  });
});

describe('times from the wire', () => {
  it('[A2A-RPC-16] [MGMT-ERR-03] an RFC 3339 time is read field by field: real calendar days, years 1-9999 in UTC', () => {
    expect(instantOf('2024-02-29T12:00:00.5+01:00')).toBe('2024-02-29T11:00:00.500Z');
    expect(instantOf('2024-01-01 00:00:00+0530')).toBe('2023-12-31T18:30:00.000Z');
    expect(instantOf('2024-01-01t00:00:00z')).toBe('2024-01-01T00:00:00.000Z');
    expect(instantOf('0050-06-01T00:00:00Z')).toBe('0050-06-01T00:00:00.000Z');
    expect(instantOf('0001-01-01T00:00:00Z')).toBe('0001-01-01T00:00:00.000Z');
    expect(instantOf('9999-12-31T23:59:59.999999999Z')).toBe('9999-12-31T23:59:59.999Z');
    for (const text of ['0000-01-01T00:00:00Z', '0001-01-01T00:00:00+01:00', '9999-12-31T23:00:00-05:00', '2023-02-29T00:00:00Z', '2024-04-31T00:00:00Z', '2024-13-01T00:00:00Z', '2024-01-01T24:00:00Z', '2024-01-01T00:60:00Z', '2024-01-01T00:00:60Z', '2024-01-01T00:00:00+16:00', '2024-01-01T00:00:00.1234567890Z', '2024-01-01T00:00:00', 'foo 12', '1', '']) {
      expect(instantOf(text), text).toBeNull();
    }
  });
});
