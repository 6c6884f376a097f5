import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
// @ts-expect-error the worker's grants are plain JavaScript (worker threads do not load TypeScript)
import { call, compileFsPolicy, grantedImports, MAX_ZEROES, OUTPUT_CAP_BYTES } from '../../runtime/core/sandbox/worker-grants.mjs';

type Descriptor = {
  openAt(pathFlags: object, path: string, openFlags: object, flags: object): Descriptor;
  read(n: bigint, at: bigint): [Uint8Array, boolean];
  write(bytes: Uint8Array, at: bigint): bigint;
  symlinkAt(target: string, path: string): void;
  linkAt(flags: object, oldPath: string, to: Descriptor, newPath: string): void;
  renameAt(oldPath: string, to: Descriptor, newPath: string): void;
};

/**
 * The filesystem grants as a hostile guest would use them, straight through the import object the sandbox gives a
 * plugin: rules `data/**` read-only and `out/**` read-write over a workspace with a file outside both.
 */
describe('filesystem confinement (wasi:filesystem grants)', () => {
  const ws = mkdtempSync(path.join(os.tmpdir(), 'fs-confinement-'));
  mkdirSync(path.join(ws, 'data'));
  mkdirSync(path.join(ws, 'out'));
  writeFileSync(path.join(ws, 'secret.txt'), 'outside the rules');
  writeFileSync(path.join(ws, 'data', 'a.txt'), 'read-only data');
  const rules = [
    { uri: 'fs://data/**', access: ['read'] },
    { uri: 'fs://out/**', access: ['read', 'write'] },
  ];
  const imports = grantedImports({ env: [], config: [], hosts: [], fs: rules, workspace: ws, allowPrivate: false });
  call.fs = compileFsPolicy(rules);
  const [[root]] = imports['wasi:filesystem/preopens'].getDirectories() as [[Descriptor, string]];
  const refusal = (f: () => unknown): unknown => {
    try {
      f();
    } catch (err) {
      return err;
    }
    return 'allowed';
  };
  const read = (d: Descriptor) => Buffer.from(d.read(1000n, 0n)[0]).toString();
  afterAll(() => rmSync(ws, { recursive: true, force: true }));

  it('reads and writes what the rules allow, and nothing else', () => {
    expect(read(root.openAt({}, 'data/a.txt', {}, { read: true }))).toBe('read-only data');
    expect(refusal(() => root.openAt({}, 'data/a.txt', {}, { write: true }))).toBe('access');
    expect(refusal(() => root.openAt({}, 'secret.txt', {}, { read: true }))).toBe('access');
    root.openAt({}, 'out/b.txt', { create: true }, { write: true }).write(new TextEncoder().encode('written'), 0n);
    expect(readFileSync(path.join(ws, 'out', 'b.txt'), 'utf8')).toBe('written');
  });

  it('makes no symlinks: not to files the rules deny, not to read-only files, not out of the workspace', () => {
    for (const [target, name] of [['../secret.txt', 'out/s1'], ['../data/a.txt', 'out/s2'], ['..', 'out/up'], ['../../../../../../../etc', 'out/etc']]) {
      expect(refusal(() => root.symlinkAt(target!, name!)), target).toBe('not-permitted');
      expect(existsSync(path.join(ws, name!))).toBe(false);
    }
  });

  it('hard links need a source the rules let the guest read and write, and a destination it may write', () => {
    expect(refusal(() => root.linkAt({}, 'secret.txt', root, 'out/h1.txt'))).toBe('access');
    expect(refusal(() => root.linkAt({}, 'data/a.txt', root, 'out/h2.txt'))).toBe('access');
    expect(refusal(() => root.linkAt({}, 'out/b.txt', root, 'data/h3.txt'))).toBe('access');
    // The destination is judged where it is made, through the descriptor it is made in.
    const data = root.openAt({}, 'data', { directory: true }, { read: true });
    expect(refusal(() => root.linkAt({}, 'out/b.txt', data, 'h4.txt'))).toBe('access');
    expect(refusal(() => root.linkAt({}, 'out/b.txt', root, 'out/h5.txt'))).toBe('allowed');
    const out = root.openAt({}, 'out', { directory: true }, { read: true });
    expect(refusal(() => root.linkAt({}, 'out/b.txt', out, 'h6.txt'))).toBe('allowed');
    expect(existsSync(path.join(ws, 'out', 'h6.txt'))).toBe(true);
    expect(readFileSync(path.join(ws, 'out', 'h5.txt'), 'utf8')).toBe('written');
  });

  it('renames only between writable places', () => {
    expect(refusal(() => root.renameAt('data', root, 'out/data'))).toBe('access');
    expect(refusal(() => root.renameAt('out/b.txt', root, 'data/b.txt'))).toBe('access');
    expect(refusal(() => root.renameAt('out/b.txt', root, 'out/c.txt'))).toBe('allowed');
  });

  it('shows none of the host: no working directory of the node, no standard input, no unbounded zeroes', () => {
    expect(imports['wasi:cli/environment'].initialCwd()).toBe('/');
    const bare = grantedImports({ env: [], config: [], hosts: [], fs: [], workspace: null, allowPrivate: false });
    expect(bare['wasi:cli/environment'].initialCwd()).toBeUndefined();
    expect(bare['wasi:cli/environment'].getEnvironment()).toEqual([]);
    const stdin = bare['wasi:cli/stdin'].getStdin() as { read(n: bigint): Uint8Array; blockingRead(n: bigint): Uint8Array };
    expect(refusal(() => stdin.read(10n))).toEqual({ tag: 'closed' });
    expect(refusal(() => stdin.blockingRead(10n))).toEqual({ tag: 'closed' });
    const stdout = bare['wasi:cli/stdout'].getStdout() as { writeZeroes(n: bigint): void; blockingWriteZeroesAndFlush(n: bigint): void };
    call.out = { stdout: Buffer.alloc(0), stderr: Buffer.alloc(0), truncated: false, written: false };
    try {
      expect(refusal(() => stdout.writeZeroes(BigInt(MAX_ZEROES) + 1n))).toEqual({ tag: 'closed' });
      expect(refusal(() => stdout.blockingWriteZeroesAndFlush(4n * 1024n ** 3n))).toEqual({ tag: 'closed' });
      // Zeroes within the bound are an ordinary write: captured, and capped like any output.
      stdout.blockingWriteZeroesAndFlush(10n);
      expect(call.out.stdout).toEqual(Buffer.alloc(10));
      stdout.writeZeroes(BigInt(MAX_ZEROES));
      expect([call.out.stdout.length, call.out.truncated]).toEqual([OUTPUT_CAP_BYTES, true]);
    } finally {
      call.out = null;
    }
  });
});
