export { reflectComponent, binaryKind, ComponentFormatError, MAX_COMPONENT_NESTING, type ComponentInfo, type FuncType, type ValType } from './component-reflect.ts';
export { capMemory, definedMemories, MemoryCapError, MAX_TABLE_ENTRIES } from './memory-cap.ts';
