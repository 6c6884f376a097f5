import type { Caller } from '../identity/index.ts';
import type { CallOutput, InvokeOutcome } from '../core/sandbox/index.ts';
import type { BuiltinFamily } from './surface-rules.ts';
import { PlatformError } from '../core/errors/index.ts';

/** A JSON Schema (draft-07, the dialect Ajv and MCP clients read by default). */
export type JsonSchema = Record<string, unknown>;

/** What tools are bound to: a gateway (MCP surface) or an agent (A2A surface). */
export interface BindingTarget {
  kind: 'gateway' | 'agent';
  id: string;
  accountId: string;
}

/** Where a tool comes from: the rules of a surface depend on it (a built-in's family decides where it appears). */
export type ToolOrigin =
  | { kind: 'plugin'; capabilityId: string }
  | { kind: 'builtin'; family: BuiltinFamily; operation: string }
  /** A connector: the tool of an upstream server (a custom MCP server, a REST API). */
  | { kind: 'connector'; capabilityId: string; upstream: string }
  /** Another agent of the account, bound to an agent as a tool. */
  | { kind: 'agent'; agentId: string }
  /** A workflow attached to the agent or gateway: a call starts a run. */
  | { kind: 'workflow'; workflowId: string };

export type ToolResult = (
  | { isError: false; value: unknown }
  | { isError: true; kind: Exclude<InvokeOutcome, { ok: true }>['kind']; message: string; payload?: unknown }
) & { output?: CallOutput };

export interface InvokeOptions {
  /**
   * Where the caller's workspace is: the surface and the user it works for (`workspaceAnchor`), never a session.
   * Tools that use the filesystem refuse callers without one (anonymous callers of a public gateway).
   */
  anchor?: string | null;
  /** Aborts the call (an agent task cancelled, a request given up). */
  signal?: AbortSignal;
  /** The agent task the call is made in, and its thread (A2A contextId): absent outside an agent's run. */
  thread?: { contextId: string; taskId: string };
}

/**
 * One tool a surface can expose, whatever provides it: plugins, built-ins, connectors and workflows are sources of
 * the same entry, so lists, discovery and dispatch never depend on where a tool comes from.
 */
export interface ToolEntry {
  name: string;
  description: string;
  inputSchema: JsonSchema;
  /** Read-tier: the tool cannot change anything outside the call (no filesystem writes, no network). */
  readOnly: boolean;
  /** Needs a workspace anchor (a known user), so anonymous callers never see it. */
  requiresAnchor: boolean;
  origin: ToolOrigin;
  /**
   * Text an agent's instructions gain while the tool is bound (the skills it may read): instructions shaped by what
   * is bound, read from the cached tool list rather than from the store on every model turn.
   */
  instructions?: string;
  /** Runs the tool for a caller, in the caller's workspace when it has one. */
  invoke(caller: Caller, args: unknown, opts: InvokeOptions): Promise<ToolResult>;
}

export interface ToolSource {
  /** The tools this source contributes to a binding target, in a stable order. */
  tools(target: BindingTarget): Promise<ToolEntry[]>;
  /** Bus subjects whose messages mean this source's tools may have changed (cached lists are dropped). */
  changedOn?: readonly string[];
}

/**
 * A workspace anchor: the workspace of `principalId` on one gateway or agent, a directory inside the account's
 * workspace root. Two users of a gateway, or one user on two gateways, never share files.
 */
export const workspaceAnchor = (surface: 'gateway' | 'agent', surfaceId: string, principalId: string): string => `${surface}-${surfaceId}/principal-${principalId}`;

/** The problems a call's error names at most: a call with thousands of unknown members would get a message of megabytes. */
const PROBLEMS_NAMED = 10;

/**
 * The error of a call whose arguments failed its tool's schema check, naming the first problems:
 * `invalid arguments for calc_add: /a must be integer; / must NOT have additional properties; and 41 more`.
 */
export function invalidArguments(tool: string, errors: readonly { instancePath: string; message?: string }[] | null | undefined): PlatformError {
  const all = errors ?? [];
  const named = all.slice(0, PROBLEMS_NAMED).map((e) => `${e.instancePath || '/'} ${e.message}`);
  const problems = all.length > PROBLEMS_NAMED ? `${named.join('; ')}; and ${all.length - PROBLEMS_NAMED} more` : named.join('; ');
  return new PlatformError('TOOL_INVALID_ARGUMENTS', `invalid arguments for ${tool}: ${problems}`);
}
