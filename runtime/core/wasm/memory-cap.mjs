/**
 * Caps every memory a core module defines at `maxPages` (64 KiB each), and every table at MAX_TABLE_ENTRIES, by
 * rewriting the memory and table sections before the module is compiled. Piscina's resourceLimits bound only the JS
 * heap, never wasm memories or tables; with the maxima rewritten, `memory.grow` and `table.grow` past them fail inside
 * the sandbox instead (an unbounded `table.grow` is a fatal out-of-memory for the whole process, not a trap).
 * Components cannot import host memories or tables, so defined ones are all there is.
 */
export class MemoryCapError extends Error {
  name = 'MemoryCapError';
}

/** @returns {[number, number]} the value and the position after it */
function readU32(b, pos) {
  let result = 0;
  let shift = 0;
  for (;;) {
    if (pos >= b.length) throw new MemoryCapError('unexpected end of the core module');
    const byte = b[pos++];
    result += (byte & 0x7f) * 2 ** shift;
    if ((byte & 0x80) === 0) return [result, pos];
    shift += 7;
    if (shift > 63) throw new MemoryCapError('malformed LEB128 integer');
  }
}

function writeU32(n) {
  const out = [];
  do {
    let byte = n % 128;
    n = Math.floor(n / 128);
    if (n > 0) byte |= 0x80;
    out.push(byte);
  } while (n > 0);
  return out;
}

/** Entries a table may hold (a JS engine component needs a few thousand). */
export const MAX_TABLE_ENTRIES = 100_000;

/** A table section with every table's maximum at most MAX_TABLE_ENTRIES. */
function capTables(module, pos, end) {
  let count;
  let p;
  [count, p] = readU32(module, pos);
  const body = [...writeU32(count)];
  for (let i = 0; i < count; i++) {
    const refType = module[p++];
    // Tables with an initializer expression (0x40) or of 64-bit indices are not produced by component toolchains.
    if (refType !== 0x70 && refType !== 0x6f) throw new MemoryCapError(`unsupported table type 0x${refType.toString(16)}`);
    const flags = module[p++];
    if (flags !== 0x00 && flags !== 0x01) throw new MemoryCapError('unsupported table limits');
    let min;
    let max = MAX_TABLE_ENTRIES;
    [min, p] = readU32(module, p);
    if (flags & 0x01) [max, p] = readU32(module, p);
    if (min > MAX_TABLE_ENTRIES) throw new MemoryCapError(`a table needs ${min} entries at start, above the limit of ${MAX_TABLE_ENTRIES}`);
    body.push(refType, 0x01, ...writeU32(min), ...writeU32(Math.min(max, MAX_TABLE_ENTRIES)));
  }
  if (p !== end) throw new MemoryCapError('malformed table section');
  return Uint8Array.from([4, ...writeU32(body.length), ...body]);
}

/** The sections of a core module, in order: id and the byte range of the section's contents. */
function* sections(module) {
  if (module.length < 8 || module[4] !== 0x01) throw new MemoryCapError('not a core WebAssembly module');
  let pos = 8;
  while (pos < module.length) {
    const id = module[pos++];
    let size;
    [size, pos] = readU32(module, pos);
    const end = pos + size;
    if (end > module.length) throw new MemoryCapError('a section runs past the end of the core module');
    yield { id, start: pos, end };
    pos = end;
  }
}

/** A memory section with every memory's maximum at `maxPages`. */
function capMemories(module, pos, end, maxPages) {
  let count;
  let p;
  [count, p] = readU32(module, pos);
  const body = [...writeU32(count)];
  for (let i = 0; i < count; i++) {
    const flags = module[p++];
    if (flags & 0x04) throw new MemoryCapError('64-bit memories are not supported');
    let min;
    [min, p] = readU32(module, p);
    if (flags & 0x01) [, p] = readU32(module, p);
    if (min > maxPages) throw new MemoryCapError(`the module needs ${min} pages of memory at start, above the plugin's limit of ${maxPages}`);
    body.push(flags | 0x01, ...writeU32(min), ...writeU32(maxPages));
  }
  if (p !== end) throw new MemoryCapError('malformed memory section');
  return Uint8Array.from([5, ...writeU32(body.length), ...body]);
}

/** @param {Uint8Array} module @param {number} maxPages @returns {Uint8Array} */
export function capMemory(module, maxPages) {
  // Sections are copied as slices: a JS engine component's code section is megabytes long.
  const out = [module.subarray(0, 8)];
  for (const { id, start, end } of sections(module)) {
    if (id === 4) out.push(capTables(module, start, end));
    else if (id === 5) out.push(capMemories(module, start, end, maxPages));
    else out.push(Uint8Array.from([id, ...writeU32(end - start)]), module.subarray(start, end));
  }
  return new Uint8Array(Buffer.concat(out));
}

/** The memories a core module defines and the largest maximum among them, in pages (null when none declares one). */
export function definedMemories(module) {
  for (const { id, start } of sections(module)) {
    if (id !== 5) continue;
    let count;
    let p;
    [count, p] = readU32(module, start);
    let maxPages = null;
    for (let i = 0; i < count; i++) {
      const flags = module[p++];
      [, p] = readU32(module, p);
      if (flags & 0x01) {
        let max;
        [max, p] = readU32(module, p);
        maxPages = Math.max(maxPages ?? 0, max);
      }
    }
    return { count, maxPages };
  }
  return { count: 0, maxPages: null };
}
