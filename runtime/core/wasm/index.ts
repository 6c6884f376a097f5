export { reflectComponent, binaryKind, ComponentFormatError, MAX_COMPONENT_NESTING, type ComponentInfo, type FuncType, type ValType } from './component-reflect.ts';
// @ts-expect-error plain JavaScript shared with worker threads (no declaration file)
import * as cap from './index.mjs';

/** Caps every memory of a core module at `maxPages` and every table at MAX_TABLE_ENTRIES (see memory-cap.mjs). */
export const capMemory: (module: Uint8Array, maxPages: number) => Uint8Array = cap.capMemory;
/** The memories a core module defines and the largest maximum among them, in pages (null when none declares one). */
export const definedMemories: (module: Uint8Array) => { count: number; maxPages: number | null } = cap.definedMemories;
export const MemoryCapError: new (message: string) => Error = cap.MemoryCapError;
export const MAX_TABLE_ENTRIES: number = cap.MAX_TABLE_ENTRIES;
