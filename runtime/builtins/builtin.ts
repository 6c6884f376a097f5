export { BuiltinToolError } from './tool-error.ts';
import type { Store } from '../../store/index.ts';
import type { EgressOptions } from '../core/egress/index.ts';
import type { TaskPool } from '../core/workers/index.ts';
import type { Caller } from '../identity/index.ts';
import type { BuiltinFamily, JsonSchema } from '../tools/index.ts';
import type { WebSearchProvider } from './search-provider.ts';

/** What a built-in operation runs with: the caller, its workspace (when it has one) and the node's services. */
export interface BuiltinContext {
  caller: Caller;
  /** The caller's workspace anchor (tool.ts `workspaceAnchor`), null for an anonymous caller. */
  anchor: string | null;
  /** The gateway or agent the tool is bound to (the public memory of anonymous callers is the surface's). */
  surface: { kind: 'gateway' | 'agent'; id: string };
  signal?: AbortSignal;
}

export interface BuiltinDeps {
  store: Pick<Store, 'memories'>;
  tasks: TaskPool;
  /** Where workspaces live: `{workspacesDir}/{account}/{anchor}` (shared with plugins' filesystem grants). */
  workspacesDir: string;
  /** How outbound requests are made (the operator's loopback switch and extra CAs, for development and tests). */
  egress: Pick<EgressOptions, 'allowLoopback' | 'ca' | 'resolve'>;
  /** The operator's web search provider; null when none is configured. */
  search: WebSearchProvider | null;
  /** The Chromium the Browser's captures launch; null when this node has none. */
  chromiumPath: string | null;
}

export interface BuiltinOperation {
  /** The tool's name as listed, e.g. `file_read`. */
  name: string;
  /** The operation within its family, as the surface rules name it (`read`, `screenshot`, ...). */
  operation: string;
  description: string;
  inputSchema: JsonSchema;
  readOnly: boolean;
  run(deps: BuiltinDeps, ctx: BuiltinContext, args: Record<string, unknown>): Promise<unknown>;
}

/** One built-in capability (spec §2: a fixed string id, `specifications {type, kind, sort_order, config}`). */
export interface Builtin {
  id: string;
  /** The spec's kind label: Files, Memory, Code Runner, ... */
  kind: string;
  family: BuiltinFamily;
  name: string;
  namespace: string;
  description: string;
  sortOrder: number;
  config: Record<string, unknown> | null;
  operations: BuiltinOperation[];
}
