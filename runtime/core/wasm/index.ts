export { reflectComponent, binaryKind, ComponentFormatError, MAX_COMPONENT_NESTING, type ComponentInfo, type FuncType, type ValType } from './component-reflect.ts';
// Plain JavaScript shared with worker threads, typed by its declaration (index.d.mts).
export { capMemory, definedMemories, MemoryCapError, MAX_TABLE_ENTRIES } from './index.mjs';
