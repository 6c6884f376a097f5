/**
 * Caps every memory a core module defines at `maxPages` (64 KiB each) by rewriting its memory section before the
 * module is compiled. Piscina's resourceLimits bound only the JS heap, never wasm linear memory; with the maximum
 * rewritten, `memory.grow` past the cap fails inside the sandbox instead. Components cannot import host memory, so
 * defined memories are all there is.
 */
export class MemoryCapError extends Error {
  override readonly name = 'MemoryCapError';
}

function readU32(b: Uint8Array, pos: number): [number, number] {
  let result = 0;
  let shift = 0;
  for (;;) {
    if (pos >= b.length) throw new MemoryCapError('unexpected end of the core module');
    const byte = b[pos++]!;
    result += (byte & 0x7f) * 2 ** shift;
    if ((byte & 0x80) === 0) return [result, pos];
    shift += 7;
    if (shift > 63) throw new MemoryCapError('malformed LEB128 integer');
  }
}

function writeU32(n: number): number[] {
  const out: number[] = [];
  do {
    let byte = n % 128;
    n = Math.floor(n / 128);
    if (n > 0) byte |= 0x80;
    out.push(byte);
  } while (n > 0);
  return out;
}

export function capMemory(module: Uint8Array, maxPages: number): Uint8Array {
  if (module.length < 8 || module[4] !== 0x01) throw new MemoryCapError('not a core WebAssembly module');
  // Sections are copied as slices: a JS engine component's code section is megabytes long.
  const out: Uint8Array[] = [module.subarray(0, 8)];
  let pos = 8;
  while (pos < module.length) {
    const id = module[pos++]!;
    let size: number;
    [size, pos] = readU32(module, pos);
    const end = pos + size;
    if (end > module.length) throw new MemoryCapError('a section runs past the end of the core module');
    if (id !== 5) {
      out.push(Uint8Array.from([id, ...writeU32(size)]), module.subarray(pos, end));
      pos = end;
      continue;
    }
    let count: number;
    let p: number;
    [count, p] = readU32(module, pos);
    const body: number[] = [...writeU32(count)];
    for (let i = 0; i < count; i++) {
      const flags = module[p++]!;
      if (flags & 0x04) throw new MemoryCapError('64-bit memories are not supported');
      let min: number;
      [min, p] = readU32(module, p);
      if (flags & 0x01) [, p] = readU32(module, p);
      if (min > maxPages) throw new MemoryCapError(`the module needs ${min} pages of memory at start, above the plugin's limit of ${maxPages}`);
      body.push(flags | 0x01, ...writeU32(min), ...writeU32(maxPages));
    }
    if (p !== end) throw new MemoryCapError('malformed memory section');
    out.push(Uint8Array.from([5, ...writeU32(body.length), ...body]));
    pos = end;
  }
  return new Uint8Array(Buffer.concat(out));
}
