export type { JsonSchema, BindingTarget, ToolOrigin, ToolResult, InvokeOptions, ToolEntry, ToolSource } from './tool.ts';
export { invalidArguments, workspaceAnchor } from './tool.ts';
export { createToolRegistry, type ToolRegistry } from './tool-registry.ts';
export * from './autonomy.ts';
export * from './surface-rules.ts';
