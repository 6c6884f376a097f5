import { parse as parseYaml } from 'yaml';
import { PlatformError } from '../core/errors/index.ts';
import type { JsonSchema } from '../tools/index.ts';

/** One operation of a REST connector: what its tool is called and takes, and how a call becomes a request. */
export interface RestOperation {
  /** The operation part of `{connector_namespace}_{operation}`: the operationId, else `{method}_{path}`. */
  name: string;
  method: 'GET' | 'PUT' | 'POST' | 'DELETE' | 'PATCH' | 'HEAD' | 'OPTIONS';
  /** The path template, `{name}` for each path parameter. */
  path: string;
  description: string;
  inputSchema: JsonSchema;
  /** Each parameter: where it goes and the argument that carries it. */
  params: { name: string; in: 'path' | 'query' | 'header'; arg: string }[];
  /** The argument carrying the JSON request body, when the operation takes one. */
  bodyArg: string | null;
  readOnly: boolean;
}

/** How the document says a credential is sent (the first scheme an `--api-key` can fill). */
export type ApiKeyPlacement = { in: 'header' | 'query'; name: string; prefix: string } | null;

export const OPENAPI_LIMITS = { documentBytes: 4 * 1024 * 1024, operations: 300, schemaBytes: 64 * 1024, schemaDepth: 32, schemaNodes: 20_000 } as const;

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const;
const invalid = (message: string) => new PlatformError('ADMIN_INVALID', `invalid OpenAPI document: ${message}`);
/** An operation name as a tool name accepts it: letters, digits, underscores. */
const nameOf = (s: string) => s.replace(/[^A-Za-z0-9_]+/g, '_').replace(/^_+|_+$/g, '').slice(0, 64);

/** What a reference inside the document points at (a JSON pointer after `#`), or undefined. */
function pointee(doc: unknown, ref: string): unknown {
  let v: unknown = doc;
  for (const raw of ref.slice(2).split('/')) {
    if (ref === '#') break;
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (v === null || typeof v !== 'object' || !Object.hasOwn(v, key)) return undefined;
    v = (v as Record<string, unknown>)[key];
  }
  return v;
}

/** A parameter, request body or path item that may be a reference, resolved (a chain of them at most 8 long). */
function follow<T>(doc: unknown, x: T): T {
  let v: unknown = x;
  for (let i = 0; i < 8 && v && typeof v === 'object' && typeof (v as { $ref?: unknown }).$ref === 'string'; i++) v = pointee(doc, (v as { $ref: string }).$ref);
  return v as T;
}

/**
 * A schema as standalone JSON: references expanded in place, a reference met again inside its own expansion
 * (a recursive schema) and anything past the depth limit become `{}` (any value), so the tool's schema is finite.
 * `budget` counts the nodes made: shared references expanded over and over cannot blow a schema up.
 */
function plain(doc: unknown, schema: unknown, budget: { nodes: number }, expanding: readonly string[] = [], depth = 0): unknown {
  if (schema === null || typeof schema !== 'object') return schema;
  if (--budget.nodes < 0) throw invalid(`a schema expands to more than ${OPENAPI_LIMITS.schemaNodes} nodes`);
  if (depth > OPENAPI_LIMITS.schemaDepth) return {};
  if (Array.isArray(schema)) return schema.map((x) => plain(doc, x, budget, expanding, depth + 1));
  const o = schema as Record<string, unknown>;
  if (typeof o.$ref === 'string') {
    if (expanding.includes(o.$ref)) return {};
    return plain(doc, pointee(doc, o.$ref) ?? {}, budget, [...expanding, o.$ref], depth + 1);
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) {
    // OpenAPI-only keywords a JSON Schema validator does not know.
    if (k === 'xml' || k === 'discriminator' || k === 'externalDocs' || k === 'example') continue;
    out[k] = plain(doc, v, budget, expanding, depth + 1);
  }
  return out;
}

/** The first `$ref` that points outside the document, or null (walked without recursion: documents may nest deep). */
function externalRef(doc: unknown): string | null {
  const stack: unknown[] = [doc];
  while (stack.length > 0) {
    const v = stack.pop();
    if (v === null || typeof v !== 'object') continue;
    const ref = (v as { $ref?: unknown }).$ref;
    if (typeof ref === 'string' && !ref.startsWith('#')) return ref;
    for (const x of Array.isArray(v) ? v : Object.values(v)) stack.push(x);
  }
  return null;
}

/** The document, from JSON or YAML text, checked against the OpenAPI 3 schema; local references only. */
export async function readOpenApi(text: string): Promise<Record<string, any>> {
  if (Buffer.byteLength(text) > OPENAPI_LIMITS.documentBytes) throw invalid(`larger than ${OPENAPI_LIMITS.documentBytes / 1024 / 1024} MiB`);
  let doc: unknown;
  try {
    doc = text.trimStart().startsWith('{') ? JSON.parse(text) : parseYaml(text, { maxAliasCount: 100 });
  } catch (err) {
    throw invalid(`neither JSON nor YAML: ${(err as Error).message}`);
  }
  if (!doc || typeof doc !== 'object' || typeof (doc as { openapi?: unknown }).openapi !== 'string' || !/^3\.[01]\./.test((doc as { openapi: string }).openapi)) {
    throw invalid('an OpenAPI 3.0 or 3.1 document is expected (its "openapi" field names the version)');
  }
  // Nothing is fetched or read while resolving: a reference to another file or URL is refused.
  const outside = externalRef(doc);
  if (outside !== null) throw invalid(`references outside the document are not followed (${outside.slice(0, 200)})`);
  // Validated on a copy (validation dereferences it); the operations are read from the document as it is.
  const options = { resolve: { external: false, file: false }, dereference: { circular: 'ignore' as const }, timeoutMs: 10_000 };
  // Loaded when a document is first read, not with the node (about a fifth of a second of every start).
  const { compileErrors, validate } = await import('@readme/openapi-parser');
  const result = await validate(structuredClone(doc) as never, options);
  if (!result.valid) throw invalid(compileErrors(result).slice(0, 2_000));
  return doc as Record<string, any>;
}

/** The tools of a REST connector: one per operation, its input schema from the parameters and the JSON body. */
export function operationsOf(doc: Record<string, any>): RestOperation[] {
  const ops: RestOperation[] = [];
  const seen = new Set<string>();
  for (const [path, raw] of Object.entries<Record<string, any>>(doc.paths ?? {})) {
    const item = follow(doc, raw);
    for (const method of METHODS) {
      const op = item?.[method];
      if (!op) continue;
      const name = nameOf(op.operationId ?? `${method}${path}`);
      if (!name) throw invalid(`${method.toUpperCase()} ${path} has no usable operation name`);
      if (seen.has(name)) throw invalid(`two operations are named ${name}`);
      seen.add(name);
      ops.push(operation(doc, name, method, path, item, op));
      if (ops.length > OPENAPI_LIMITS.operations) throw invalid(`more than ${OPENAPI_LIMITS.operations} operations`);
    }
  }
  if (ops.length === 0) throw invalid('it describes no operation');
  return ops;
}

function operation(doc: Record<string, any>, name: string, method: (typeof METHODS)[number], path: string, item: Record<string, any>, op: Record<string, any>): RestOperation {
  // Path-level parameters apply unless the operation redefines them (same name and location).
  const byKey = new Map<string, Record<string, any>>();
  for (const ref of [...(item.parameters ?? []), ...(op.parameters ?? [])]) {
    const p = follow(doc, ref);
    if (p && p.in !== 'cookie') byKey.set(`${p.in}:${p.name}`, p);
  }
  const budget = { nodes: OPENAPI_LIMITS.schemaNodes };
  const names = [...byKey.values()].map((p) => p.name as string);
  const properties: Record<string, unknown> = {};
  const required: string[] = [];
  const params: RestOperation['params'] = [];
  for (const p of byKey.values()) {
    // A name used in two locations (an id in the path and the query) is told apart by its location.
    const arg = names.filter((n) => n === p.name).length > 1 ? `${p.in}_${p.name}` : (p.name as string);
    properties[arg] = { ...(plain(doc, p.schema ?? { type: 'string' }, budget) as object), ...(p.description ? { description: p.description } : {}) };
    if (p.required || p.in === 'path') required.push(arg);
    params.push({ name: p.name, in: p.in, arg });
  }
  let bodyArg: string | null = null;
  const requestBody = follow(doc, op.requestBody);
  const json = requestBody?.content?.['application/json'] ?? Object.entries<any>(requestBody?.content ?? {}).find(([type]) => /\+json$/.test(type))?.[1];
  if (json) {
    bodyArg = properties.body === undefined ? 'body' : 'request_body';
    properties[bodyArg] = { ...(plain(doc, json.schema ?? {}, budget) as object), ...(requestBody.description ? { description: requestBody.description } : {}) };
    if (requestBody.required) required.push(bodyArg);
  }
  const inputSchema: JsonSchema = { type: 'object', properties, ...(required.length ? { required } : {}) } as JsonSchema;
  if (JSON.stringify(inputSchema).length > OPENAPI_LIMITS.schemaBytes) throw invalid(`the input of ${name} is larger than ${OPENAPI_LIMITS.schemaBytes / 1024} KiB as a JSON Schema`);
  const description = [op.summary, op.description].filter((s) => typeof s === 'string' && s.length > 0).join('\n\n') || `${method.toUpperCase()} ${path}`;
  return { name, method: method.toUpperCase() as RestOperation['method'], path, description: description.slice(0, 2_000), inputSchema, params, bodyArg, readOnly: method === 'get' || method === 'head' || method === 'options' };
}

/** Where the document's first API key or bearer scheme puts a credential, if it has one. */
export function apiKeyPlacement(doc: Record<string, any>): ApiKeyPlacement {
  for (const s of Object.values<Record<string, any>>(doc.components?.securitySchemes ?? {})) {
    if (s.type === 'apiKey' && (s.in === 'header' || s.in === 'query')) return { in: s.in, name: s.name, prefix: '' };
    if (s.type === 'http' && String(s.scheme).toLowerCase() === 'bearer') return { in: 'header', name: 'Authorization', prefix: 'Bearer ' };
  }
  return null;
}

/** The base URL the document names, when it names an absolute one. */
export function serverUrlOf(doc: Record<string, any>): string | null {
  const url = doc.servers?.[0]?.url;
  return typeof url === 'string' && /^https?:\/\//.test(url) && !url.includes('{') ? url : null;
}
