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
  /** The agent task and thread the call is made in (tool.ts InvokeOptions), null outside an agent's run. */
  thread?: { contextId: string; taskId: string } | null;
  signal?: AbortSignal;
}

export interface BuiltinDeps {
  store: Pick<Store, 'memories' | 'journal'>;
  tasks: TaskPool;
  /** Where workspaces live: `{workspacesDir}/{account}/{anchor}` (shared with plugins' filesystem grants). */
  workspacesDir: string;
  /** How outbound requests are made (the operator's loopback switch and extra CAs, for development and tests). */
  egress: Pick<EgressOptions, 'allowLoopback' | 'ca' | 'resolve'>;
  /** The operator's web search provider; null when none is configured. */
  search: WebSearchProvider | null;
  /** The Chromium the Browser's captures launch; null when this node has none. */
  chromiumPath: string | null;
  /** What the builder built-ins run (plugin builds, skills, workflows), bound by the composition root. */
  builders?: Builders;
  /** What the Scheduler built-in runs (schedules of agents), bound by the composition root. */
  scheduler?: Scheduler;
}

/**
 * What the Scheduler built-in does, provided by the schedules feature (above the built-ins) through the composition
 * root: the agent's tools over the same schedules the management API lists and cancels, with the caller's authority.
 * Mistakes come back as BuiltinToolErrors (the model reads them).
 */
export interface Scheduler {
  create(caller: Caller, agentId: string, r: { message: string; at?: string; delaySeconds?: number; cron?: string; timezone?: string; contextId?: string; originTaskId?: string }): Promise<unknown>;
  list(caller: Caller, agentId: string): Promise<unknown>;
  cancel(caller: Caller, agentId: string, id: string): Promise<unknown>;
  createTrigger(caller: Caller, agentId: string, r: { kind: string; message: string; workflowId?: string; events?: string[]; contextId?: string; originTaskId?: string }): Promise<unknown>;
  listTriggers(caller: Caller, agentId: string): Promise<unknown>;
  deleteTrigger(caller: Caller, agentId: string, id: string): Promise<unknown>;
}

/**
 * What the builder built-ins do, provided by the features above the built-ins (plugin builds, skills, workflows)
 * through the composition root: the Plugin, Skill and Workflow Builders are tools over those same operations, with
 * the caller's authority, so an agent or an MCP client builds exactly what the management API would.
 */
export interface Builders {
  /** Starts a plugin build and waits for its end (up to a bound); the build as the API shows it. */
  buildPlugin(caller: Caller, b: { name: string; source: string; wit: string; world: string; description?: string; config?: string }, signal?: AbortSignal): Promise<unknown>;
  /** Creates the skill of that name, or replaces its bundle. */
  saveSkill(caller: Caller, s: { name: string; description: string; instructions: string; files?: { path: string; content: string }[] }): Promise<unknown>;
  /** Creates the workflow of that name, or its next version (the operator's write, allowed to this tool). */
  saveWorkflow(caller: Caller, definition: unknown): Promise<unknown>;
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
