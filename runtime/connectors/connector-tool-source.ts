import type { ConnectorRecord, Store } from '../../store/index.ts';
import type { EgressOptions } from '../core/egress/index.ts';
import { PlatformError } from '../core/errors/index.ts';
import { hasAuthority } from '../identity/index.ts';
import type { JsonSchema, ToolEntry, ToolResult, ToolSource } from '../tools/index.ts';
import { mcpUpstream, type McpUpstream, type UpstreamTool } from './mcp-upstream.ts';
import type { RestOperation } from './openapi-operations.ts';
import { callRestOperation, type ConnectorSecret } from './rest-call.ts';
import type { Sealer } from './sealed-secrets.ts';

/** Names an MCP client accepts; an upstream tool named otherwise is not re-exported. */
const TOOL_NAME = /^[A-Za-z0-9_.-]{1,100}$/;

/** `{connector_namespace}_{operation}` (spec §2), hyphens of the namespace as underscores, as for plugins. */
export const connectorToolName = (namespace: string, operation: string) => `${namespace.replace(/-/g, '_')}_${operation}`;

/**
 * The tools of the connectors bound to a gateway or agent. A custom MCP server's are its own tools, listed from it
 * (kept for the connector's ttl per node) and called on it for the caller; an upstream that cannot be reached lists
 * the tools it last listed (none if it never answered) and its calls fail as tool errors that say so. A REST
 * connector's are the operations of its OpenAPI document, read when the operator created it.
 */
export function connectorToolSource(deps: { store: Pick<Store, 'connectors'>; sealer: Sealer; egress: Pick<EgressOptions, 'allowLoopback' | 'ca' | 'resolve'>; now?: () => number }): ToolSource & { close(): Promise<void> } {
  const now = deps.now ?? Date.now;
  const upstreams = new Map<string, { url: string; upstream: McpUpstream; tools: UpstreamTool[] | null; at: number }>();

  const secretOf = (c: ConnectorRecord) => (c.sealedSecret ? deps.sealer.open<ConnectorSecret>(c.sealedSecret) : null);

  function upstreamOf(c: ConnectorRecord) {
    const known = upstreams.get(c.capabilityId);
    if (known && known.url === c.url) return known;
    void known?.upstream.close();
    const headers = secretOf(c)?.headers ?? {};
    const entry = { url: c.url, upstream: mcpUpstream(c.url, headers, deps.egress), tools: null as UpstreamTool[] | null, at: 0 };
    upstreams.set(c.capabilityId, entry);
    return entry;
  }

  async function toolsOf(c: ConnectorRecord): Promise<UpstreamTool[]> {
    const u = upstreamOf(c);
    if (u.tools && now() - u.at < c.ttlMs) return u.tools;
    try {
      u.tools = await u.upstream.tools();
      u.at = now();
    } catch {
      // Unreachable now: what it listed last (or nothing) until it answers again.
    }
    return u.tools ?? [];
  }

  /** One upstream tool of a connector as the registry lists it; `call` runs it once the caller's authority holds. */
  function connectorTool(c: ConnectorRecord, t: { name: string; description: string; inputSchema: JsonSchema; readOnly: boolean }, call: (args: unknown, signal?: AbortSignal) => Promise<ToolResult>): ToolEntry {
    return {
      name: connectorToolName(c.namespace, t.name),
      description: t.description,
      inputSchema: t.inputSchema,
      readOnly: t.readOnly,
      requiresAnchor: false,
      origin: { kind: 'connector', capabilityId: c.capabilityId, upstream: t.name },
      async invoke(caller, args, opts) {
        if (!hasAuthority(caller.role, 'execute')) throw new PlatformError('TOOL_FORBIDDEN', `the ${caller.role} role lacks execute authority`);
        return call(args, opts.signal);
      },
    };
  }

  async function callUpstream(c: ConnectorRecord, name: string, args: unknown, signal?: AbortSignal): Promise<ToolResult> {
    try {
      const r = await upstreamOf(c).upstream.call(name, args, signal);
      if (r.isError) return { isError: true, kind: 'component-error', message: r.text, payload: r.text };
      return { isError: false, value: r.structured ?? r.text };
    } catch (err) {
      return { isError: true, kind: 'error', message: `the MCP server of connector ${c.name} failed: ${(err as Error).message}` };
    }
  }

  return {
    async tools(target) {
      const out: ToolEntry[] = [];
      for (const c of await deps.store.connectors.bound(target.accountId, target)) {
        if (c.kind === 'rest') {
          for (const op of c.operations as RestOperation[]) out.push(connectorTool(c, op, (args, signal) => callRestOperation(c.name, c.url, op, args, secretOf(c), deps.egress, signal)));
          continue;
        }
        for (const t of await toolsOf(c)) {
          if (TOOL_NAME.test(t.name)) out.push(connectorTool(c, t, (args, signal) => callUpstream(c, t.name, args, signal)));
        }
      }
      return out;
    },
    async close() {
      await Promise.all([...upstreams.values()].map((u) => u.upstream.close()));
      upstreams.clear();
    },
  };
}
