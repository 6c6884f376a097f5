import type { Static, TSchema } from 'typebox';
import type { Validator } from 'typebox/compile';
import { PlatformError } from '../../runtime/index.ts';

/**
 * ProtoJSON in, one shape out. A2A 1.0 params arrive as ProtoJSON, which lets a client write a field as `taskId` or
 * `task_id`, an enum as `ROLE_USER` or `1`, an int32 as `10` or `"10"`, and `null` for "unset". `readParams` folds
 * all of that into the camelCase, enum-name shape of schemas.ts, steered by the schema's annotations, then checks it
 * against the schema; a failure is -32602 naming the member at fault. Members a schema does not name are dropped
 * (DM-SERIAL-005: unknown fields are ignored), and so is `tenant`: the account comes from the credential only.
 */

type Node = {
  type?: string;
  properties?: Record<string, Node>;
  required?: string[];
  items?: Node;
  maxItems?: number;
  enum?: string[];
  pattern?: string;
  protoEnum?: readonly string[];
  protoInt?: boolean;
  zeroUnset?: boolean;
  lowercase?: boolean;
  freeform?: boolean;
  oneof?: string[];
};

const invalid = (message: string) => new PlatformError('A2A_INVALID_PARAMS', `Invalid params: ${message}`);
const snake = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const INT_STRING = /^-?\d{1,16}$/;

/** proto3 fields without presence read their zero value as "not set": an empty string, the UNSPECIFIED enum, a 0 where marked. */
const isUnset = (node: Node, v: unknown) => (v === '' && node.type === 'string' && !node.enum) || (node.protoEnum !== undefined && v === node.protoEnum[0]) || (node.zeroUnset === true && v === 0);

/** An object node's members, worked out once per schema: each name, its snake_case spelling, how to treat it. */
interface Member {
  name: string;
  alt: string | null;
  node: Node;
  /** Whether its zero value is kept: required members, and members of a oneof (they have presence). */
  keepsZero: boolean;
}
const plans = new WeakMap<Node, Member[]>();
function membersOf(node: Node): Member[] {
  let plan = plans.get(node);
  if (!plan) {
    const keep = new Set([...(node.required ?? []), ...(node.oneof ?? [])]);
    plan = Object.entries(node.properties ?? {}).map(([name, sub]) => ({ name, alt: snake(name) === name ? null : snake(name), node: sub, keepsZero: keep.has(name) }));
    plans.set(node, plan);
  }
  return plan;
}

/** The value in the internal shape. `path` is built only when a message needs it: large requests stay cheap. */
function normalize(node: Node, value: unknown, path: () => string): unknown {
  if (value === null) return undefined;
  if (node.freeform) return value;
  if (node.protoEnum && typeof value === 'number' && Number.isInteger(value)) return node.protoEnum[value] ?? value;
  if (node.protoInt && typeof value === 'string' && INT_STRING.test(value)) return Number(value);
  if (node.lowercase && typeof value === 'string') return value.toLowerCase();
  if (node.type === 'array' && node.items && Array.isArray(value)) {
    // A list past its cap is refused before it is walked: the cost of a request stays bounded by the schema.
    if (node.maxItems !== undefined && value.length > node.maxItems) throw invalid(`${path()} must have at most ${node.maxItems} items`);
    const items = node.items;
    return value.map((v, i) => normalize(items, v, () => `${path()}[${i}]`));
  }
  if (node.type !== 'object' || !node.properties || !isObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const m of membersOf(node)) {
    const hasName = Object.hasOwn(value, m.name);
    const hasAlt = m.alt !== null && Object.hasOwn(value, m.alt);
    if (!hasName && !hasAlt) continue;
    if (hasName && hasAlt) throw invalid(`${path()}.${m.name} and ${path()}.${m.alt} are the same field: send it once`);
    const v = normalize(m.node, value[hasName ? m.name : m.alt!], () => `${path()}.${m.name}`);
    if (v === undefined || (!m.keepsZero && isUnset(m.node, v))) continue;
    out[m.name] = v;
  }
  if (node.oneof) {
    const present = node.oneof.filter((k) => k in out);
    if (present.length !== 1) {
      throw invalid(`${path()} must have exactly one of ${node.oneof.join(', ')}${present.length ? ` (it has ${present.join(' and ')})` : ''}`);
    }
  }
  return out;
}

// Reading a validation failure ---------------------------------------------------------------------------------

const ARTICLE: Record<string, string> = { object: 'an object', array: 'an array', string: 'a string', integer: 'an integer', number: 'a number', boolean: 'a boolean' };
const PATTERN_MEANS: Record<string, string> = {
  '^[^\\u0000]*$': 'must not contain NUL characters',
  '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,9})?(Z|[+-]\\d{2}:\\d{2})$': 'must be an RFC 3339 timestamp',
};

interface SchemaError {
  keyword: string;
  schemaPath: string;
  instancePath: string;
  params: Record<string, unknown>;
  message: string;
}

/** The schema node a JSON pointer (`#/properties/message/properties/role`) names. */
function nodeAt(root: Node, pointer: string): Node {
  let node: unknown = root;
  for (const raw of pointer.replace(/^#\/?/, '').split('/').filter(Boolean)) {
    const key = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    node = isObject(node) ? node[key] : undefined;
  }
  return (isObject(node) ? node : {}) as Node;
}

/** `/message/parts/0/text` as `params.message.parts[0].text`. */
const pathOf = (pointer: string) =>
  pointer
    .split('/')
    .slice(1)
    .map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'))
    .reduce((out, k) => (/^\d+$/.test(k) ? `${out}[${k}]` : /^[A-Za-z_$][\w$]*$/.test(k) ? `${out}.${k}` : `${out}[${JSON.stringify(k)}]`), 'params');

function describe(root: Node, e: SchemaError): string {
  const node = nodeAt(root, e.schemaPath);
  const at = pathOf(e.instancePath);
  // An enum is described by its names whatever failed (a string not among them, a number past the last one).
  const keyword = node.enum && (e.keyword === 'type' || e.keyword === 'enum') ? 'enum' : e.keyword;
  switch (keyword) {
    case 'required':
      return `${at}.${(e.params.requiredProperties as string[] | undefined)?.[0] ?? '?'} is required`;
    case 'type':
      return `${at} must be ${ARTICLE[String(e.params.type)] ?? String(e.params.type)}`;
    case 'enum': {
      const names = node.enum ?? [];
      const numbers = node.protoEnum ? ` (or ${names.map((n) => node.protoEnum!.indexOf(n)).join(', ')})` : '';
      return `${at} must be one of ${names.join(', ')}${numbers}`;
    }
    case 'pattern':
      return `${at} ${PATTERN_MEANS[node.pattern ?? ''] ?? 'has the wrong form'}`;
    case 'format':
      return `${at} ${e.params.format === 'byte' ? 'must be base64' : `must be a ${String(e.params.format)}`}`;
    case 'minLength':
    case 'minItems':
      return e.params.limit === 1 ? `${at} must not be empty` : `${at} ${e.message}`;
    default:
      return `${at} ${e.message}`;
  }
}

// Compiled checks ---------------------------------------------------------------------------------------------

/** ProtoJSON bytes: standard or URL-safe base64, padded or not. A character class: linear on any input. */
export const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;
/**
 * Long strings already found to be base64 while their body was parsed in a worker (http/json-body.ts): the check of the
 * `byte` format takes them as they are, the same strings (not copies), instead of running the character class over
 * tens of megabytes on the node's thread again. Set only for the length of one synchronous `readParams`.
 */
let vouched: readonly string[] = [];

/**
 * TypeBox's compiler, loaded when the agent surface first needs it (`loadParamChecks`, awaited by the surface's
 * request hook) rather than when a node starts: it adds some three hundred modules to the ones a node loads,
 * for a surface many nodes serve rarely. Once loaded, checks stay synchronous.
 */
let compiler: typeof import('typebox/compile') | undefined;
let loading: Promise<void> | undefined;
export function loadParamChecks(): Promise<void> {
  return (loading ??= (async () => {
    const [compile, { Format }] = await Promise.all([import('typebox/compile'), import('typebox/format')]);
    Format.Set('byte', (value: string) => (vouched.length > 0 && vouched.includes(value)) || BASE64.test(value));
    compiler = compile;
  })());
}

const compiled = new WeakMap<TSchema, Validator>();
function validator(schema: TSchema): Validator {
  if (!compiler) throw new Error('A2A params checked before loadParamChecks() finished');
  let v = compiled.get(schema);
  if (!v) compiled.set(schema, (v = compiler.Compile(schema)));
  return v;
}

/**
 * The params of a method in the one internal shape, or -32602. A method without params reads them as `{}`; params
 * by position (an array) are not part of A2A.
 */
export function readParams<T extends TSchema>(schema: T, params: unknown, opts: { base64?: readonly string[] } = {}): Static<T> {
  if (params !== undefined && !isObject(params)) throw invalid('params must be an object');
  const value = normalize(schema as unknown as Node, params ?? {}, () => 'params');
  const check = validator(schema);
  vouched = opts.base64 ?? [];
  try {
    if (check.Check(value)) return value as Static<T>;
    const first = check.Errors(value)[0] as unknown as SchemaError | undefined;
    throw invalid(first ? describe(schema as unknown as Node, first) : 'params do not match the method');
  } finally {
    vouched = [];
  }
}

/** Whether a value the agent runtime produced is a correct wire shape; the first problem when it is not. */
export function checkResult(schema: TSchema, value: unknown): { ok: true } | { ok: false; problem: string } {
  const check = validator(schema);
  if (check.Check(value)) return { ok: true };
  const first = check.Errors(value)[0] as unknown as SchemaError | undefined;
  return { ok: false, problem: first ? `${first.instancePath || '/'} ${first.message}` : 'does not match' };
}
