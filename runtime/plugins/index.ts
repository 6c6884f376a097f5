export { PluginError, type PluginErrorCode } from './errors.ts';
export { readNpack, DEFAULT_ARCHIVE_LIMITS, type ArchiveLimits, type NpackContents, type ArchiveEntry } from './npack-archive.ts';
export { parsePluginConfig, parsePluginEnv, memoryBytes, timeoutMs, DEFAULT_LIMITS, MAX_MEMORY_BYTES, MAX_TIMEOUT_MS, type PluginConfig } from './plugin-config.ts';
