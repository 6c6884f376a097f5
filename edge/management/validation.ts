import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import ajvFormats from 'ajv-formats';
import type { FastifySchemaCompiler, FastifySchemaValidationError } from 'fastify';
import { instantOf, TOOL_NAME } from '../../runtime/index.ts';
import type { CompileAhead } from '../http/index.ts';

/**
 * The patterns the schemas use, each with how a value that fails it is described (Ajv would quote the expression).
 * Text must not hold NUL: the store cannot keep it, and no name, search term or address needs it.
 */
export const PATTERNS = {
  noNul: { pattern: '^[^\\u0000]*$', means: 'must not contain NUL characters' },
  uuid: { pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$', means: 'must be a UUID' },
  clientId: { pattern: '^[\\x21-\\x7e]{1,200}$', means: 'must be 1 to 200 visible ASCII characters' },
  toolName: { pattern: TOOL_NAME.source, means: 'must be * or a tool name of 1 to 128 letters, digits, _ . : -' },
  cursor: { pattern: '^[A-Za-z0-9_-]{1,40}$', means: 'must be a cursor this API issued' },
} as const;

const MEANS = new Map<string, string>(Object.values(PATTERNS).map((p) => [p.pattern, p.means]));

type HttpPart = 'body' | 'querystring' | 'params' | 'headers';

const make = (coerceTypes: Options['coerceTypes']) => {
  // The schemas are the routes' own constants, so they are not checked against Ajv's meta-schema: compiling that
  // meta-schema was one turn of 20-75 ms per instance (past the main-thread budget, DESIGN §5, on a slow machine). A
  // schema that is wrong still fails its compile: strict mode refuses unknown keywords, wrong keyword values and
  // unknown types as it generates the code (test/edge/management-schemas.test.ts).
  const ajv = new Ajv({ coerceTypes, useDefaults: true, removeAdditional: true, allErrors: false, validateSchema: false });
  // A CommonJS module: its default import is the module object, which carries the plugin as `default`.
  ajvFormats.default(ajv);
  // Times in queries and bodies reach timestamptz parameters: `date-time` here is a time PostgreSQL takes (a real
  // calendar day, years 1–9999), not only its layout; the format's own check lets year 0000 through to a database error.
  ajv.addFormat('date-time', (text: string) => instantOf(text) !== null);
  // Compiling once compiles a format's code: paid here, in a compile-ahead turn, not in a request.
  ajv.compile({ type: 'string', format: 'uuid' });
  return ajv;
};

/**
 * The process's two Ajv instances, shared by every management app in it (a test process starts many): their compiled
 * validators are cached by schema, and the schemas are the routes' own constants.
 */
const shared: { body?: Ajv; text?: Ajv } = {};
/** Which instance a part's validators use: the body's JSON as sent, or text coerced (query strings, path segments). */
const kindOf = (part: HttpPart) => (part === 'body' ? 'body' : 'text');
const ajvOf = (part: HttpPart) => (kindOf(part) === 'body' ? (shared.body ??= make(false)) : (shared.text ??= make('array')));

/**
 * The management routes' validators, one Ajv per part of the request. Query strings and path segments are text, so
 * they are coerced to the declared types (`limit=20` is the integer 20, a repeated parameter is an array); a JSON
 * body keeps its own types, so `"client_id": 42` is refused rather than read as the string "42" (fastify's single
 * default Ajv coerces bodies too). Defaults are filled in, and fields a schema closes off are dropped.
 *
 * With `ahead`, the Ajv instances are made in the background too, not inside a request: made in the first request
 * that needs one, they held the event loop 40–90 ms (DESIGN §5: the main-thread budget).
 */
export function createValidatorCompiler(ahead?: CompileAhead): FastifySchemaCompiler<unknown> {
  // The two Ajv instances first, each in a compile-ahead turn of its own (without it, on the first use of each); a
  // request that waits for its route's compiles waits for the one its validators need too (compile-ahead.ts).
  const making = { body: () => void ajvOf('body'), text: () => void ajvOf('querystring') };
  ahead?.defer(making.body);
  ahead?.defer(making.text);
  // Compiled on a route's first request (or ahead, in the background, once the node serves), not at start:
  // compiling every route's schemas took a quarter of a second of each start, for routes most nodes never see.
  return ({ schema, httpPart, url }) => {
    let validate: ValidateFunction | undefined;
    const part = (httpPart ?? 'body') as HttpPart;
    const compiled = () => (validate ??= ajvOf(part).compile(schema as object));
    ahead?.defer(making[kindOf(part)], false, url);
    ahead?.defer(() => void compiled(), false, url);
    const lazy = (data: unknown) => {
      const validate = compiled();
      const ok = validate(data);
      lazy.errors = validate.errors;
      return ok;
    };
    lazy.errors = null as ValidateFunction['errors'];
    return lazy;
  };
}

/** `/specifications/0/name` as `specifications.0.name`; a missing property is named by itself. */
function fieldOf(e: ErrorObject | FastifySchemaValidationError): string {
  const path = e.instancePath.split('/').slice(1).map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'));
  const missing = (e.params as { missingProperty?: string }).missingProperty;
  if (missing !== undefined) path.push(missing);
  return path.join('.');
}

function complaint(e: ErrorObject | FastifySchemaValidationError): string {
  const params = e.params as { allowedValues?: unknown[]; pattern?: string; limit?: number };
  if (e.keyword === 'required') return 'is required';
  if (e.keyword === 'enum') return `must be one of ${(params.allowedValues ?? []).map(String).join(', ')}`;
  if (e.keyword === 'pattern') return MEANS.get(params.pattern ?? '') ?? e.message ?? 'has the wrong form';
  if (e.keyword === 'format' && (e.params as { format?: string }).format === 'uuid') return PATTERNS.uuid.means;
  if (e.keyword === 'minLength' && params.limit === 1) return 'must not be empty';
  return e.message ?? `fails ${e.keyword}`;
}

/**
 * How a validation failure reads (fastify's `schemaErrorFormatter`): the first problem, naming the field, e.g.
 * `limit must be <= 100` or `client_id is required`. The error handler adds which part of the request it was in.
 */
export function describeValidation(errors: FastifySchemaValidationError[], _dataVar: string): Error {
  const e = errors[0];
  if (!e) return new Error('does not match its schema');
  const field = fieldOf(e);
  if (field === '') return new Error(e.keyword === 'type' ? `must be a JSON ${(e.params as { type?: string }).type ?? 'object'}` : complaint(e));
  return new Error(`${field} ${complaint(e)}`);
}
