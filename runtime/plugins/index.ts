export { readNpack, DEFAULT_ARCHIVE_LIMITS, type ArchiveLimits, type NpackContents, type ArchiveEntry } from './npack-archive.ts';
export { parsePluginConfig, parsePluginEnv, memoryBytes, timeoutMs, DEFAULT_LIMITS, MAX_MEMORY_BYTES, MAX_TIMEOUT_MS, type PluginConfig } from './plugin-config.ts';
export { toJsonSchema, inputSchema, toolName } from './tool-schema.ts';
export { admitComponent, ALLOWED_IMPORT_PREFIXES, type Admission, type AdmittedTool } from './admission.ts';
export { witDocs } from './wit-docs.ts';
export { registerUpload, pluginVersionAddress, namespaceOf, type UploadResult } from './register-upload.ts';
export { activationEffect, compileArtifacts, pluginVersionProjection, requestActivation, versionOutcome, ACTIVATION_WAIT_MS, TRANSPILE_LIMITS, type VersionOutcome } from './activation.ts';
export { createToolInvoker, type InvokeTool } from './invoke-tool.ts';
export { pluginToolSource } from './plugin-tool-source.ts';
