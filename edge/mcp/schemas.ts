import {
  CallToolRequestParamsSchema,
  InitializeRequestParamsSchema,
  JSONRPCNotificationSchema,
  JSONRPCRequestSchema,
  JSONRPCResponseSchema,
  PaginatedRequestParamsSchema,
} from '@modelcontextprotocol/core';
import { z } from 'zod';
import { RPC, RpcError } from './errors.ts';
import { CLIENT_CAPABILITIES_META, PROTOCOL_VERSION_META } from './protocol.ts';

/**
 * The MCP messages the gateway reads, checked against the MCP SDK's own schemas (@modelcontextprotocol/core, whose
 * vocabulary is the 2025-11-25 revision's) per protocol revision, and the one schema the SDK does not publish yet
 * (the 2026-07-28 request `_meta`). Every schema is built once, here; a request only runs `safeParse`. A message
 * that passes is used as it was sent: zod's parsed copy would drop members the schemas do not name.
 */

/**
 * A request. JSON-RPC 2.0 allows any number as an id and the gateway echoes the id it was given, so it takes every
 * number JSON can carry back (zod refuses Infinity, which `1e400` parses to); the SDK's own id schema would narrow
 * this to integers.
 */
const RequestSchema = JSONRPCRequestSchema.extend({ id: z.union([z.string(), z.number()]) });
export type JsonRpcRequest = z.infer<typeof RequestSchema>;

/** 2026-07-28: every request names its revision and the client's capabilities (no public SDK schema yet). */
const StatelessMetaSchema = z.looseObject({
  [PROTOCOL_VERSION_META]: z.string(),
  [CLIENT_CAPABILITIES_META]: z.looseObject({}),
});

const PaginatedMethods = {
  'tools/list': PaginatedRequestParamsSchema,
  'resources/list': PaginatedRequestParamsSchema,
  'resources/templates/list': PaginatedRequestParamsSchema,
  'prompts/list': PaginatedRequestParamsSchema,
};

/**
 * The params each revision checks, by method. The session revisions (2024-11-05 to 2025-11-25) open a session with
 * `initialize`; the stateless one (2026-07-28) has no `initialize` and carries `_meta` on every request instead.
 */
const REVISIONS = {
  session: { ...PaginatedMethods, initialize: InitializeRequestParamsSchema, 'tools/call': CallToolRequestParamsSchema },
  stateless: { ...PaginatedMethods, 'tools/call': CallToolRequestParamsSchema },
};
export type Revision = keyof typeof REVISIONS;
type Checked = (typeof REVISIONS)['session'];
export type ParamsOf<M extends keyof Checked> = z.infer<Checked[M]>;

const ARTICLE: Record<string, string> = { object: 'an object', record: 'an object', string: 'a string', number: 'a number', int: 'an integer', array: 'an array', boolean: 'a boolean' };

/** A member's path as a reader would write it: `params.name`, `params._meta["io.modelcontextprotocol/..."]`. */
const pathOf = (prefix: string, path: PropertyKey[]) =>
  path.reduce<string>((out, k) => (typeof k === 'string' && /^[A-Za-z_$][\w$]*$/.test(k) ? (out ? `${out}.${k}` : k) : `${out}[${JSON.stringify(typeof k === 'symbol' ? String(k) : k)}]`), prefix);

const article = (type: string) => ARTICLE[type] ?? type;

/**
 * One zod issue as a sentence naming the member at fault: `params.name must be a string`. A union that failed is
 * described by the alternatives it accepts (`must be a string or an integer`), or by its closest alternative.
 */
function describe(issue: z.core.$ZodIssue, prefix: string): string {
  if (issue.code === 'invalid_union' && issue.errors.length > 0) {
    const types = issue.errors.map((b) => (b.length === 1 && b[0]!.code === 'invalid_type' && b[0]!.path.length === 0 ? b[0]!.expected : null));
    if (types.every((t) => t !== null)) return `${pathOf(prefix, issue.path)} must be ${types.map((t) => article(t!)).join(' or ')}`;
    const closest = issue.errors.reduce((a, b) => (b.length < a.length ? b : a))[0]!;
    return describe({ ...closest, path: [...issue.path, ...closest.path] }, prefix);
  }
  const field = pathOf(prefix, issue.path);
  const what =
    issue.code === 'invalid_type'
      ? `must be ${article(issue.expected)}`
      : issue.code === 'unrecognized_keys'
        ? `has an unexpected member ${issue.keys.map((k) => JSON.stringify(k)).join(', ')}`
        : issue.message.replace(/^Invalid input: /, '');
  return field ? `${field} ${what}` : `the message ${what}`;
}

export type Inbound =
  /** A request, to be answered. */
  | { kind: 'request'; request: JsonRpcRequest }
  /** A notification or a response: accepted, with nothing to answer (the gateway sends no requests of its own). */
  | { kind: 'accepted' }
  /** Not a message the gateway can take: `id` is echoed when the request's own id was readable. */
  | { kind: 'invalid'; code: number; message: string; id: string | number | null };

const ACCEPTED: Inbound = { kind: 'accepted' };
const invalid = (message: string, code: number = RPC.INVALID_REQUEST, id: string | number | null = null): Inbound => ({ kind: 'invalid', code, message, id });

/**
 * Why a message failed its envelope, in the order a reader would fix it: the message itself, its version, method,
 * id, other members, params. Bad params of a request whose id was readable answer -32602 with that id.
 */
function failure(issues: z.core.$ZodIssue[], id: unknown): Inbound {
  const at = (key: string | undefined) => issues.find((i) => i.path[0] === key);
  if (at(undefined)?.code === 'invalid_type' || at('jsonrpc')) return invalid('Invalid Request: expected a JSON-RPC 2.0 message');
  if (at('method')) return invalid('Invalid Request: method must be a string');
  if (at('id')) return invalid('Invalid Request: id must be a string or a finite number');
  const other = issues.find((i) => i.path[0] !== 'params');
  if (other) return invalid(`Invalid Request: ${describe(other, '')}`);
  return invalid(`Invalid params: ${describe(issues[0]!, '')}`, RPC.INVALID_PARAMS, typeof id === 'string' || typeof id === 'number' ? id : null);
}

/**
 * Reads one JSON-RPC message (JSON-RPC 2.0 §4, §5): a `method` makes it a request, or a notification when it has no
 * `id`; a `result` or an `error` without a method makes it a response. Batches were removed in 2025-11-25.
 */
export function readEnvelope(message: unknown): Inbound {
  if (Array.isArray(message)) return invalid('Invalid Request: JSON-RPC batches are not supported (removed in MCP 2025-11-25)');
  const m = (typeof message === 'object' && message !== null ? message : {}) as Record<string, unknown>;
  if (!('method' in m) && ('result' in m || 'error' in m)) {
    const r = JSONRPCResponseSchema.safeParse(message);
    return r.success ? ACCEPTED : invalid(`Invalid Request: ${describe(r.error.issues[0]!, '')}`);
  }
  if ('method' in m && !('id' in m)) {
    const r = JSONRPCNotificationSchema.safeParse(message);
    return r.success ? ACCEPTED : failure(r.error.issues, null);
  }
  const r = RequestSchema.safeParse(message);
  return r.success ? { kind: 'request', request: message as JsonRpcRequest } : failure(r.error.issues, m.id);
}

/**
 * Members the schemas type as a record of anything, checked here by their shape alone: zod would copy every key of a
 * tool's arguments (up to MAX_VALUES of them) into a new object it then drops, the costliest step of a large call.
 */
const SHAPE_ONLY: Partial<Record<keyof Checked, string>> = { 'tools/call': 'arguments' };

/** The params of `method` in `revision`, checked when the revision defines them (-32602 naming the member otherwise). */
export function readParams<M extends keyof Checked>(revision: Revision, method: M, params: Record<string, unknown>): ParamsOf<M> {
  const schema = (REVISIONS[revision] as Partial<Checked>)[method];
  if (!schema) return params as ParamsOf<M>;
  const member = SHAPE_ONLY[method];
  const shaped = member !== undefined && params[member] !== undefined ? params[member] : undefined;
  let checked = params;
  if (shaped !== undefined) {
    const { [member!]: _shapeChecked, ...rest } = params;
    checked = rest;
  }
  const r = schema.safeParse(checked);
  if (!r.success) throw new RpcError(RPC.INVALID_PARAMS, `Invalid params: ${describe(r.error.issues[0]!, 'params')}`);
  // After the members zod checks before it (the schema's order: _meta, task, name), as zod would report it.
  if (shaped !== undefined && (typeof shaped !== 'object' || shaped === null || Array.isArray(shaped))) {
    throw new RpcError(RPC.INVALID_PARAMS, `Invalid params: params.${member} must be an object`);
  }
  return params as ParamsOf<M>;
}

/**
 * The 2026-07-28 `_meta` of a request: its revision, or -32602 (answered 400) when either member is missing or
 * malformed.
 */
export function readStatelessMeta(meta: unknown): { version: string } {
  const r = StatelessMetaSchema.safeParse(meta);
  if (!r.success) {
    const problem = meta === undefined ? '' : ` (${describe(r.error.issues[0]!, 'params._meta')})`;
    throw new RpcError(RPC.INVALID_PARAMS, `Invalid params: _meta must carry "${PROTOCOL_VERSION_META}" and "${CLIENT_CAPABILITIES_META}"${problem}`, undefined, 400);
  }
  return { version: r.data[PROTOCOL_VERSION_META] };
}
