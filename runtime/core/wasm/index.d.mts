/** Types of index.mjs: the part of wasm handling that worker threads load as plain JavaScript. */
export { capMemory, definedMemories, MemoryCapError, MAX_TABLE_ENTRIES } from './memory-cap.mjs';
