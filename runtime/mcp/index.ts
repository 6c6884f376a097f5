export * from './tool-registry.ts';
export * from './autonomy.ts';
export * from './presentation.ts';
export * from './surface-rules.ts';
