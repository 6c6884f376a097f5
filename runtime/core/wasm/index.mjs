// The part of wasm handling that worker threads load as plain JavaScript (no TypeScript loader there).
export { capMemory, definedMemories, MemoryCapError, MAX_TABLE_ENTRIES } from './memory-cap.mjs';
