export type { Builtin, BuiltinOperation, BuiltinDeps, BuiltinContext, Builders } from './builtin.ts';
export { BUILTINS, findBuiltin } from './catalogue.ts';
export { builtinToolSource } from './builtin-tool-source.ts';
export { WORKSPACE_LIMITS, relativeParts, resolveInside, workspaceUsage } from './workspace-paths.ts';
export { BuiltinToolError } from './tool-error.ts';
export { CODE_LIMITS } from './code-runner.ts';
export { searxngProvider, type WebSearchProvider, type WebResult } from './search-provider.ts';
export { runJavascript } from './run-javascript.ts';
