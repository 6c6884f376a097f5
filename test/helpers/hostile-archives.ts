import { buildComponent, CALC_WAT, CALC_WIT } from './components.ts';
import { npack } from './npack.ts';

/**
 * Uploads built to stall a node that parses or stores them on its event loop (issue 9 §7, measured before the fix):
 * each is small on the wire. Shared by the hostile-input tests and the `hostile-upload` bench scenario.
 */
export interface HostileUpload {
  name: string;
  archive: Buffer;
  /** The status a well-behaved node answers it with. */
  expect: number;
}

/** A component section with id 0 (custom) and the given name, of `size` zero bytes: compresses to almost nothing. */
function customSection(name: string, size: number): Buffer {
  const leb = (n: number) => {
    const out: number[] = [];
    do {
      let b = n & 0x7f;
      n = Math.floor(n / 128);
      if (n > 0) b |= 0x80;
      out.push(b);
    } while (n > 0);
    return Buffer.from(out);
  };
  const nameBytes = Buffer.from(name);
  const body = Buffer.concat([leb(nameBytes.length), nameBytes, Buffer.alloc(size)]);
  return Buffer.concat([Buffer.from([0]), leb(body.length), body]);
}

export async function hostileUploads(): Promise<HostileUpload[]> {
  const calc = Buffer.from(await buildComponent({ wit: CALC_WIT, world: 'calc', wat: CALC_WAT }));
  const wasm = { name: 'calc.wasm', body: calc };
  return [
    {
      // A .wit at its 256 KiB cap, all blank lines before the package line: quadratic under a multiline `^\s*`.
      name: 'wit-blank-lines',
      archive: await npack([wasm, { name: 'calc.wit', body: `${'\n'.repeat(256 * 1024 - CALC_WIT.length - 1)}${CALC_WIT}\n` }]),
      expect: 200,
    },
    {
      // A valid component carrying a 28 MiB custom section: about 30 KB on the wire, 28 MiB to store.
      name: 'large-custom-section',
      archive: await npack([{ name: 'calc.wasm', body: Buffer.concat([calc, customSection('padding', 28 * 1024 * 1024)]) }]),
      expect: 200,
    },
    {
      // platform.yaml at its 64 KiB cap holding a list of 16,000 items: parsed, then refused by validation.
      name: 'yaml-long-list-at-cap',
      archive: await npack([wasm, { name: 'platform.yaml', body: `schema_version: "1.0"\nmetadata:\n  tags: [${'a,'.repeat(16_000)}a]\n`.padEnd(64 * 1024, ' ') }]),
      expect: 400,
    },
    {
      // platform.yaml of 300,000 items (1.2 MB, 4 KB compressed): refused from its tar header before it is parsed.
      name: 'yaml-300k-items',
      archive: await npack([wasm, { name: 'platform.yaml', body: `schema_version: "1.0"\nmetadata:\n  tags:\n${'- a\n'.repeat(300_000)}` }]),
      expect: 413,
    },
    {
      // A gzip bomb: 20 KB that inflate past the 64 MiB decompression cap.
      name: 'gzip-bomb',
      archive: await npack([wasm, { name: 'filler.bin', body: Buffer.alloc(80 * 1024 * 1024) }]),
      expect: 413,
    },
  ];
}
