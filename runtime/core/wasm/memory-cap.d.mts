/** Types of memory-cap.mjs (plain JavaScript, shared with the worker threads that compile components). */
export declare class MemoryCapError extends Error {}
/** Entries a table may hold (a JS engine component needs a few thousand). */
export declare const MAX_TABLE_ENTRIES: number;
/** Caps every memory of a core module at `maxPages` and every table at MAX_TABLE_ENTRIES. */
export declare function capMemory(module: Uint8Array, maxPages: number): Uint8Array;
/** The memories a core module defines and the largest maximum among them, in pages (null when none declares one). */
export declare function definedMemories(module: Uint8Array): { count: number; maxPages: number | null };
