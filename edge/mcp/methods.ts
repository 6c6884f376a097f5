import type { Caller } from '../../runtime/index.ts';
import { decideNonInteractive, DISCOVER_QUERY_MAX, effectiveMode, isPlatformError, metaTools, rankTools, workspaceAnchor, type AutonomyPolicy, type BindingTarget, type EffectiveMode, type ToolEntry, type ToolRegistry, type ToolResult } from '../../runtime/index.ts';
import type { McpGatewayContext, McpGuards } from './context.ts';
import { RPC, RpcError, rpcErrorOf } from './errors.ts';
import { CACHE_SCOPE, KNOWN_VERSIONS, LIST_TTL_MS, PAGE_SIZE, SERVER_INFO, SERVER_INFO_META } from './protocol.ts';
import type { ParamsOf } from './schemas.ts';

export interface CallScope {
  ctx: McpGatewayContext;
  caller: Caller | null;
  callerKey: string;
  /** A unique id for this request (budget allocations are keyed by it). */
  requestId: string;
}

export interface MethodDeps {
  registry: ToolRegistry;
  policy: AutonomyPolicy;
  guards: McpGuards;
}

const AUTONOMY_META = 'dev.platform/autonomy';

const unknownTool = (name: string) => new RpcError(RPC.INVALID_PARAMS, `Unknown tool: ${name}`);

/** An anonymous caller of a public gateway runs tools as the account's anonymous service identity. */
const runAs = (scope: CallScope): Caller =>
  scope.caller ?? { accountId: scope.ctx.gateway.accountId, principalId: 'anonymous', kind: 'service', role: 'member', via: 'anonymous' };

function encodeCursor(offset: number): string {
  return Buffer.from(JSON.stringify({ o: offset })).toString('base64url');
}

/** An offset from a cursor this list issued (the schema has made it a string when present). */
function decodeCursor(cursor: string | undefined): number {
  if (cursor === undefined) return 0;
  if (cursor.length > 200) throw new RpcError(RPC.INVALID_PARAMS, 'Invalid cursor');
  try {
    const v = JSON.parse(Buffer.from(cursor, 'base64url').toString()) as { o?: unknown };
    // Cursors are issued at page boundaries only.
    if (typeof v.o === 'number' && Number.isInteger(v.o) && v.o > 0 && v.o % PAGE_SIZE === 0 && v.o <= 1_000_000) return v.o;
  } catch {
    // falls through
  }
  throw new RpcError(RPC.INVALID_PARAMS, 'Invalid cursor');
}

const text = (s: string) => [{ type: 'text', text: s }];

function toolResultToMcp(r: ToolResult): Record<string, unknown> {
  if (!r.isError) {
    const value = r.value;
    const structured = value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : { result: value };
    return { content: text(typeof value === 'string' ? value : JSON.stringify(value)), structuredContent: structured, isError: false };
  }
  const detail = r.payload === undefined ? r.message : typeof r.payload === 'string' ? r.payload : JSON.stringify(r.payload);
  return { content: text(`${r.kind === 'component-error' ? 'the tool failed' : `the call failed (${r.kind})`}: ${detail}`), isError: true };
}

const toolError = (message: string) => ({ content: text(message), isError: true });

/** The tool methods of one gateway, per caller; every answer is computed from the caller's own view. */
export function createToolMethods(deps: MethodDeps) {
  const targetOf = (scope: CallScope): BindingTarget => ({ kind: 'gateway', id: scope.ctx.gateway.id, accountId: scope.ctx.gateway.accountId });

  async function view(scope: CallScope): Promise<{ mode: EffectiveMode; tools: ToolEntry[] }> {
    const target = targetOf(scope);
    const [visible, bound] = await Promise.all([deps.registry.visible(target, scope.caller), deps.registry.bound(target)]);
    return { mode: effectiveMode(scope.ctx.gateway.presentationMode, bound.length), tools: visible };
  }

  const describe = async (scope: CallScope, t: ToolEntry) => ({
    name: t.name,
    description: t.description,
    inputSchema: t.inputSchema,
    annotations: { readOnlyHint: t.readOnly },
    _meta: { [AUTONOMY_META]: { outcome: await deps.policy.outlook(scope.caller, t, targetOf(scope)) } },
  });

  async function runTool(scope: CallScope, tool: ToolEntry, args: unknown): Promise<Record<string, unknown>> {
    const decision = await decideNonInteractive(deps.policy, scope.caller, tool, args, targetOf(scope));
    if (!decision.allowed) return { ...toolError(`denied: ${decision.reason}`), structuredContent: { denied: true, reason: decision.reason } };
    const accountId = scope.ctx.gateway.accountId;
    const budget = await deps.guards.allocate(accountId, scope.requestId);
    if (!budget.ok) throw new RpcError(RPC.BUDGET_REFUSED, budget.message);
    try {
      // The workspace belongs to the gateway and the signed-in principal; anonymous callers have none.
      const anchor = scope.caller ? workspaceAnchor('gateway', scope.ctx.gateway.id, scope.caller.principalId) : null;
      return toolResultToMcp(await tool.invoke(runAs(scope), args ?? {}, { anchor }));
    } catch (err) {
      // A call the platform refused before it ran was not paid for.
      if (isPlatformError(err, 'PLT_LANE_OVERLOADED')) {
        deps.guards.refund(accountId);
        throw rpcErrorOf(err);
      }
      // A call that could not be made for the caller's reasons (arguments, a missing anchor) is the tool's error.
      if (isPlatformError(err) && err.code.startsWith('TOOL_')) return toolError(err.message);
      throw err;
    }
  }

  async function meta(scope: CallScope, tools: ToolEntry[], name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
    const action = name === 'unified_tool' ? args.action : { discover_tools: 'discover', get_tool_schema: 'schema', execute_tool: 'execute' }[name];
    const find = (n: unknown) => tools.find((t) => t.name === n);
    if (action === 'discover') {
      if (typeof args.query !== 'string' || args.query.length === 0) return toolError('discover needs a non-empty `query`');
      // The schema's limit, held here too: the search runs on the node's loop (a 100 KB query held it 300 ms).
      if (args.query.length > DISCOVER_QUERY_MAX) return toolError(`\`query\` is longer than ${DISCOVER_QUERY_MAX} characters`);
      const limit = typeof args.limit === 'number' && Number.isInteger(args.limit) && args.limit >= 1 && args.limit <= 50 ? args.limit : 10;
      const found = rankTools(tools, args.query, limit);
      return { content: text(JSON.stringify(found)), structuredContent: { tools: found } };
    }
    if (action === 'schema') {
      const t = find(args.name);
      if (!t) return toolError(`unknown tool: ${String(args.name)}`);
      const d = await describe(scope, t);
      return { content: text(JSON.stringify(d)), structuredContent: d };
    }
    if (action === 'execute') {
      const t = find(args.name);
      if (!t) return toolError(`unknown tool: ${String(args.name)}`);
      if (args.arguments !== undefined && (typeof args.arguments !== 'object' || args.arguments === null || Array.isArray(args.arguments))) {
        return toolError('`arguments` must be an object');
      }
      return runTool(scope, t, args.arguments ?? {});
    }
    return toolError('unified_tool needs `action`: discover, schema or execute');
  }

  return {
    async list(scope: CallScope, params: ParamsOf<'tools/list'>) {
      const offset = decodeCursor(params.cursor);
      const { mode, tools } = await view(scope);
      const all = mode === 'direct' ? await Promise.all(tools.map((t) => describe(scope, t))) : metaTools(mode).map((m) => ({ name: m.name, description: m.description, inputSchema: m.inputSchema }));
      // Past the end: not a cursor this list could have issued (or the list shrank since): start again without one.
      if (offset > 0 && offset >= all.length) throw new RpcError(RPC.INVALID_PARAMS, 'Invalid cursor: it points past the end of the list; list again without a cursor');
      const page = all.slice(offset, offset + PAGE_SIZE);
      const next = offset + PAGE_SIZE < all.length ? { nextCursor: encodeCursor(offset + PAGE_SIZE) } : {};
      return { tools: page, ...next, ttlMs: LIST_TTL_MS, cacheScope: CACHE_SCOPE };
    },
    async call(scope: CallScope, params: ParamsOf<'tools/call'>) {
      const { name, arguments: args } = params;
      const { mode, tools } = await view(scope);
      if (mode === 'direct') {
        const tool = tools.find((t) => t.name === name);
        if (!tool) throw unknownTool(name);
        return runTool(scope, tool, args ?? {});
      }
      // In Discovery and Unified modes only the meta-tools are callable; the tools behind them are reached through them.
      if (!metaTools(mode).some((m) => m.name === name)) throw unknownTool(name);
      return meta(scope, tools, name, args ?? {});
    },
  };
}

export const initializeResult = (version: string) => ({ protocolVersion: version, capabilities: { tools: {} }, serverInfo: SERVER_INFO });

export const discoverResult = () => ({
  supportedVersions: [...KNOWN_VERSIONS],
  capabilities: { tools: {} },
  _meta: { [SERVER_INFO_META]: SERVER_INFO },
  ttlMs: LIST_TTL_MS,
  cacheScope: CACHE_SCOPE,
});

export const emptyList = (key: 'resources' | 'resourceTemplates' | 'prompts') => ({ [key]: [], ttlMs: LIST_TTL_MS, cacheScope: CACHE_SCOPE });
