export * from './admin.ts';
export * from './demo-seed.ts';
export { demoPluginArchive } from './demo-plugin.ts';
export { startHousekeeping, HOUSEKEEPING_INTERVAL_MS, type Housekeeping } from './housekeeping.ts';
export { createBuilders, BUILDER_WAIT_MS } from './builders.ts';
