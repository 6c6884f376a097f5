import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { DEFAULT_ARCHIVE_LIMITS, readNpack, type ArchiveLimits } from '../../runtime/plugins/index.ts';
import { npack, tar } from '../helpers/npack.ts';

const WASM = Buffer.from([0x00, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00]);
const code = (p: Promise<unknown>) => p.then(() => 'resolved', (e: { code?: string }) => e.code);

describe('.npack archive reader', () => {
  it('matches entries by pattern: last *.wasm wins, platform.yaml|yml, every *.wit, .env|env; directories and others skipped', async () => {
    const a = await npack([
      { name: 'plugin/', type: 'directory' },
      { name: 'plugin/first.wasm', body: 'first' },
      { name: 'plugin/README.md', body: 'ignored' },
      { name: 'plugin/api.wit', body: 'package a:b;' },
      { name: 'plugin/platform.yml', body: 'schema_version: "1.0"' },
      { name: 'plugin/.env', body: 'A=1' },
      { name: 'plugin/calc.wasm', body: WASM },
      { name: 'plugin/types.wit', body: 'package c:d;' },
      { name: 'link.wasm', type: 'symlink' },
    ]);
    const c = await readNpack(a);
    expect(c.wasm).toEqual({ path: 'plugin/calc.wasm', bytes: WASM });
    expect(c.config?.path).toBe('plugin/platform.yml');
    expect(c.env?.bytes.toString()).toBe('A=1');
    expect(c.wit.map((w) => w.path)).toEqual(['plugin/api.wit', 'plugin/types.wit']);
    expect(c.filesProcessed).toEqual(['wasm', 'platform', 'env', 'wit']);
  });

  it('lists only the kinds present, always wasm first and in the fixed order', async () => {
    expect((await readNpack(await npack([{ name: 'x.wasm', body: WASM }]))).filesProcessed).toEqual(['wasm']);
    expect((await readNpack(await npack([{ name: 'a.wit', body: '' }, { name: 'x.wasm', body: WASM }]))).filesProcessed).toEqual(['wasm', 'wit']);
    expect((await readNpack(await npack([{ name: 'env', body: 'K=v' }, { name: 'x.wasm', body: WASM }, { name: 'platform.yaml', body: '' }]))).filesProcessed).toEqual(['wasm', 'platform', 'env']);
  });

  it('refuses an archive without a component, or with names that only look like one', async () => {
    expect(await code(readNpack(await npack([{ name: 'platform.yaml', body: '' }])))).toBe('PLUGIN_ARCHIVE_NO_WASM');
    expect(await code(readNpack(await npack([{ name: '.wasm', body: WASM }, { name: 'x.wasm.txt', body: WASM }, { name: 'dir.wasm/', type: 'directory' }])))).toBe('PLUGIN_ARCHIVE_NO_WASM');
  });

  it('tells unreadable archives apart: not gzip, gzip of non-tar, truncated gzip, truncated tar, empty', async () => {
    const good = await npack([{ name: 'x.wasm', body: WASM.toString('latin1').repeat(200) }]);
    expect(await code(readNpack(Buffer.from('PK\x03\x04 a zip file')))).toBe('PLUGIN_ARCHIVE_NOT_GZIP');
    expect(await code(readNpack(Buffer.alloc(0)))).toBe('PLUGIN_ARCHIVE_NOT_GZIP');
    expect(await code(readNpack(gzipSync(Buffer.from('just some text, not a tar archive at all'.repeat(20)))))).toBe('PLUGIN_ARCHIVE_NOT_TAR');
    expect(await code(readNpack(good.subarray(0, good.length - 10)))).toBe('PLUGIN_ARCHIVE_TRUNCATED');
    const t = await tar([{ name: 'x.wasm', body: Buffer.alloc(4096, 1) }]);
    expect(await code(readNpack(gzipSync(t.subarray(0, 1024))))).toBe('PLUGIN_ARCHIVE_TRUNCATED');
    expect(await code(readNpack(gzipSync(Buffer.alloc(0))))).toBe('PLUGIN_ARCHIVE_NOT_TAR');
  });

  it('holds the caps at their edges: decompressed size, entry count, entry size', async () => {
    const limits: ArchiveLimits = { maxDecompressedBytes: 8 * 1024, maxEntries: 3, maxEntryBytes: 1024, maxConfigBytes: 1024, maxEnvBytes: 1024, maxWitBytes: 1024 };
    // A tar of one 1024-byte entry is 512 (header) + 1024 + 1024 (end blocks) = 2560 bytes.
    expect(await code(readNpack(await npack([{ name: 'x.wasm', body: Buffer.alloc(1024) }]), limits))).toBe('resolved');
    expect(await code(readNpack(await npack([{ name: 'x.wasm', body: Buffer.alloc(1025) }]), limits))).toBe('PLUGIN_ARCHIVE_ENTRY_TOO_LARGE');
    const bomb = await npack([{ name: 'x.wasm', body: Buffer.alloc(1000) }, { name: 'big.bin', body: Buffer.alloc(7 * 1024) }]);
    expect(await code(readNpack(bomb, limits))).toBe('PLUGIN_ARCHIVE_TOO_LARGE');
    const three = [{ name: 'a', body: '' }, { name: 'b', body: '' }, { name: 'x.wasm', body: WASM }];
    expect(await code(readNpack(await npack(three), limits))).toBe('resolved');
    expect(await code(readNpack(await npack([{ name: 'z', body: '' }, ...three]), limits))).toBe('PLUGIN_ARCHIVE_TOO_MANY_ENTRIES');
  });

  it('[UPLOAD-14] caps each entry by its kind from the tar header, before reading it: platform.yaml 64 KiB, .env and each .wit 256 KiB, the component 32 MiB', async () => {
    const d = DEFAULT_ARCHIVE_LIMITS;
    expect([d.maxConfigBytes, d.maxEnvBytes, d.maxWitBytes, d.maxEntryBytes]).toEqual([64 * 1024, 256 * 1024, 256 * 1024, 32 * 1024 * 1024]);
    const limits: ArchiveLimits = { ...d, maxConfigBytes: 100, maxEnvBytes: 200, maxWitBytes: 300, maxEntryBytes: 400 };
    const w = { name: 'x.wasm', body: Buffer.concat([WASM, Buffer.alloc(400 - WASM.length)]) };
    const at = async (name: string, size: number) => code(readNpack(await npack([w, { name, body: Buffer.alloc(size, 0x20) }]), limits));
    for (const [name, cap] of [['platform.yaml', 100], ['platform.yml', 100], ['.env', 200], ['env', 200], ['api.wit', 300]] as const) {
      expect(await at(name, cap), `${name} at its cap`).toBe('resolved');
      expect(await at(name, cap + 1), `${name} past its cap`).toBe('PLUGIN_ARCHIVE_ENTRY_TOO_LARGE');
    }
    const err = await readNpack(await npack([w, { name: 'platform.yaml', body: Buffer.alloc(101, 0x20) }]), limits).catch((e: Error) => e);
    expect((err as Error).message).toMatch(/platform\.yaml is larger than .*the limit for platform\.yaml/);
    expect(await code(readNpack(await npack([{ name: 'x.wasm', body: Buffer.alloc(401) }]), limits))).toBe('PLUGIN_ARCHIVE_ENTRY_TOO_LARGE');
  });
});
