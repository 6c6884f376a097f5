export { PluginError, type PluginErrorCode } from './errors.ts';
export { readNpack, DEFAULT_ARCHIVE_LIMITS, type ArchiveLimits, type NpackContents, type ArchiveEntry } from './npack-archive.ts';
export { parsePluginConfig, parsePluginEnv, memoryBytes, timeoutMs, DEFAULT_LIMITS, MAX_MEMORY_BYTES, MAX_TIMEOUT_MS, type PluginConfig } from './plugin-config.ts';
export { reflectComponent, binaryKind, ComponentFormatError, type ComponentInfo, type FuncType, type ValType } from './component-reflect.ts';
export { toJsonSchema, inputSchema, toolName, type JsonSchema } from './tool-schema.ts';
export { admitComponent, ALLOWED_IMPORT_PREFIXES, type Admission, type AdmittedTool } from './admission.ts';
export { witDocs } from './wit-docs.ts';
export { registerUpload, pluginVersionAddress, namespaceOf, type UploadResult } from './register-upload.ts';
