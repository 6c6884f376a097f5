import { BuiltinToolError, type Builtin, type BuiltinOperation } from './builtin.ts';

export const FORM_LIMITS = { fields: 30, titleChars: 200, descriptionChars: 2000, options: 50, stringChars: 10_000, schemaBytes: 16 * 1024 } as const;
const KEY = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const FORMATS = ['date', 'date-time', 'email', 'uri', 'multiline', 'password'] as const;
const KEYWORDS = new Set(['type', 'title', 'description', 'enum', 'items', 'minLength', 'maxLength', 'minimum', 'maximum', 'format', 'default', 'minItems', 'maxItems']);

export interface FormField {
  key: string;
  label: string;
  description: string | null;
  type: 'string' | 'number' | 'integer' | 'boolean' | 'array';
  required: boolean;
  /** The choices of a string (one of them) or an array (several of them). */
  options: string[] | null;
  format: (typeof FORMATS)[number] | null;
  min: number | null;
  max: number | null;
  default: unknown;
}

/** A form as the agent asked for it, checked: its fields in order, and the JSON Schema its answers are checked against. */
export interface FormSpec {
  title: string;
  description: string | null;
  fields: FormField[];
  schema: Record<string, unknown>;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const num = (v: unknown, what: string): number | null => {
  if (v === undefined) return null;
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new BuiltinToolError(`${what} must be a number`);
  return v;
};

function fieldOf(key: string, s: unknown, required: boolean): FormField {
  const at = `fields.properties.${key}`;
  if (!KEY.test(key)) throw new BuiltinToolError(`${at}: a field's name is a letter or _ then letters, digits or _ (at most 64)`);
  if (!isObject(s)) throw new BuiltinToolError(`${at}: a field is a JSON Schema object`);
  const unknown = Object.keys(s).find((k) => !KEYWORDS.has(k));
  if (unknown) throw new BuiltinToolError(`${at}: "${unknown}" is not supported in a form (use ${[...KEYWORDS].join(', ')})`);
  const type = s.type;
  if (type !== 'string' && type !== 'number' && type !== 'integer' && type !== 'boolean' && type !== 'array') throw new BuiltinToolError(`${at}.type: string, number, integer, boolean, or array (of enum strings)`);
  const text = (v: unknown, what: string, max: number) => {
    if (v === undefined) return null;
    if (typeof v !== 'string' || v.length > max) throw new BuiltinToolError(`${at}.${what}: text of at most ${max} characters`);
    return v;
  };
  const choices = (v: unknown, what: string) => {
    if (v === undefined) return null;
    if (!Array.isArray(v) || !v.length || v.length > FORM_LIMITS.options || !v.every((o) => typeof o === 'string' && o.length > 0 && o.length <= 200) || new Set(v).size !== v.length) {
      throw new BuiltinToolError(`${at}.${what}: 1 to ${FORM_LIMITS.options} distinct non-empty strings`);
    }
    return v as string[];
  };
  let options: string[] | null = null;
  if (type === 'array') {
    if (!isObject(s.items) || s.items.type !== 'string') throw new BuiltinToolError(`${at}.items: an array field is a choice of several: items {type: string, enum: [...]}`);
    options = choices(s.items.enum, 'items.enum');
    if (!options) throw new BuiltinToolError(`${at}.items.enum: the choices`);
  } else if (s.enum !== undefined) {
    if (type !== 'string') throw new BuiltinToolError(`${at}.enum: choices are strings`);
    options = choices(s.enum, 'enum');
  }
  const format = s.format === undefined ? null : (s.format as FormField['format']);
  if (format !== null && (type !== 'string' || !FORMATS.includes(format))) throw new BuiltinToolError(`${at}.format: for a string, one of ${FORMATS.join(', ')}`);
  const [minKey, maxKey] = type === 'string' ? ['minLength', 'maxLength'] : type === 'array' ? ['minItems', 'maxItems'] : ['minimum', 'maximum'];
  for (const k of ['minLength', 'maxLength', 'minimum', 'maximum', 'minItems', 'maxItems']) {
    if (s[k] !== undefined && k !== minKey && k !== maxKey) throw new BuiltinToolError(`${at}.${k}: not for a field of type ${type}`);
  }
  const min = num(s[minKey!], `${at}.${minKey}`);
  const max = num(s[maxKey!], `${at}.${maxKey}`);
  if (min !== null && max !== null && min > max) throw new BuiltinToolError(`${at}: ${minKey} is above ${maxKey}`);
  return {
    key,
    label: text(s.title, 'title', 200) ?? key,
    description: text(s.description, 'description', 1000),
    type,
    required,
    options,
    format,
    min,
    max: type === 'string' ? Math.min(max ?? FORM_LIMITS.stringChars, FORM_LIMITS.stringChars) : max,
    default: s.default,
  };
}

/** The form a `form_request` call asks for, checked; a mistake is a tool error the model reads and fixes. */
export function formSpecOf(args: Record<string, unknown>): FormSpec {
  const title = args.title;
  if (typeof title !== 'string' || !title.trim() || title.length > FORM_LIMITS.titleChars) throw new BuiltinToolError(`title: a text of 1 to ${FORM_LIMITS.titleChars} characters`);
  const description = args.description === undefined ? null : args.description;
  if (description !== null && (typeof description !== 'string' || description.length > FORM_LIMITS.descriptionChars)) throw new BuiltinToolError(`description: a text of at most ${FORM_LIMITS.descriptionChars} characters`);
  const f = args.fields;
  if (!isObject(f) || f.type !== 'object' || !isObject(f.properties)) throw new BuiltinToolError('fields: a JSON Schema {type: "object", properties: {...}, required: [...]}');
  if (Buffer.byteLength(JSON.stringify(f)) > FORM_LIMITS.schemaBytes) throw new BuiltinToolError(`fields: at most ${FORM_LIMITS.schemaBytes} bytes of JSON Schema`);
  const keys = Object.keys(f.properties);
  if (!keys.length || keys.length > FORM_LIMITS.fields) throw new BuiltinToolError(`fields.properties: 1 to ${FORM_LIMITS.fields} fields`);
  const required = f.required === undefined ? [] : f.required;
  if (!Array.isArray(required) || !required.every((r) => typeof r === 'string' && keys.includes(r))) throw new BuiltinToolError('fields.required: names of fields in properties');
  const fields = keys.map((k) => fieldOf(k, (f.properties as Record<string, unknown>)[k], required.includes(k)));
  const errors = fields.flatMap((field) => (field.default === undefined ? [] : valueProblems(field, field.default).map((p) => `fields.properties.${field.key}.default: ${p}`)));
  if (errors.length) throw new BuiltinToolError(errors[0]!);
  return { title, description: description as string | null, fields, schema: { type: 'object', properties: f.properties, required, additionalProperties: false } };
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

function valueProblems(f: FormField, v: unknown): string[] {
  const expect = (what: string) => [`must be ${what}`];
  switch (f.type) {
    case 'boolean':
      return typeof v === 'boolean' ? [] : expect('true or false');
    case 'number':
    case 'integer': {
      if (typeof v !== 'number' || !Number.isFinite(v) || (f.type === 'integer' && !Number.isInteger(v))) return expect(f.type === 'integer' ? 'a whole number' : 'a number');
      if (f.min !== null && v < f.min) return expect(`at least ${f.min}`);
      if (f.max !== null && v > f.max) return expect(`at most ${f.max}`);
      return [];
    }
    case 'array': {
      if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) return expect('a list of choices');
      const bad = v.find((x) => !f.options!.includes(x as string));
      if (bad !== undefined) return expect(`chosen among ${f.options!.join(', ')} (not ${JSON.stringify(bad)})`);
      if (new Set(v).size !== v.length) return expect('a list without repeats');
      if (f.min !== null && v.length < f.min) return expect(`at least ${f.min} choices`);
      if (f.max !== null && v.length > f.max) return expect(`at most ${f.max} choices`);
      return [];
    }
    default: {
      if (typeof v !== 'string') return expect('text');
      if (f.options && !f.options.includes(v)) return expect(`one of ${f.options.join(', ')}`);
      if (f.min !== null && v.length < f.min) return expect(`at least ${f.min} characters`);
      if (f.max !== null && v.length > f.max) return expect(`at most ${f.max} characters`);
      if (f.format === 'date' && (!DAY.test(v) || new Date(`${v}T00:00:00Z`).toISOString().slice(0, 10) !== v)) return expect('a day, YYYY-MM-DD');
      if (f.format === 'date-time' && Number.isNaN(Date.parse(v))) return expect('an ISO 8601 time');
      if (f.format === 'email' && (v.length > 320 || !EMAIL.test(v))) return expect('an email address');
      if (f.format === 'uri' && !URL.canParse(v)) return expect('a URL');
      return [];
    }
  }
}

/** What is wrong with submitted values, field by field; empty when they answer the form. */
export function formProblems(spec: FormSpec, values: unknown): string[] {
  if (!isObject(values)) return ['values: an object of the form\'s fields'];
  const problems: string[] = [];
  for (const k of Object.keys(values)) if (!spec.fields.some((f) => f.key === k)) problems.push(`${k}: the form has no such field`);
  for (const f of spec.fields) {
    const v = values[f.key];
    const missing = v === undefined || v === null || (f.type === 'string' && v === '');
    if (missing) {
      if (f.required) problems.push(`${f.key}: required`);
      continue;
    }
    for (const p of valueProblems(f, v)) problems.push(`${f.key}: ${p}`);
  }
  return problems;
}

const formRequest: BuiltinOperation = {
  name: 'form_request',
  operation: 'request',
  description:
    'Ask the user to fill in a form, and wait for the answer: the task pauses (input required) and shows the form (an A2UI form where the client renders one, a text request otherwise). ' +
    '`fields` is a JSON Schema object: properties of type string (with enum for a choice, format date, date-time, email, uri, multiline or password), number, integer, boolean, or array of enum strings (several choices), with title, description, default and min/max bounds; `required` lists what must be filled. ' +
    'The tool result is the submitted values, checked against the schema.',
  readOnly: true,
  inputSchema: {
    type: 'object',
    properties: {
      title: { type: 'string', minLength: 1, maxLength: FORM_LIMITS.titleChars },
      description: { type: 'string', maxLength: FORM_LIMITS.descriptionChars },
      fields: { type: 'object', description: 'A JSON Schema of type object: the form\'s fields as properties.' },
    },
    required: ['title', 'fields'],
    additionalProperties: false,
  },
  // The agent runtime answers this call with the user's values (agent-steps.ts): run only checks the form.
  run: async (_deps, ctx, args) => {
    if (ctx.surface.kind !== 'agent' || !ctx.thread) throw new BuiltinToolError('forms are shown to the user of an agent\'s task: there is none here');
    return { form: formSpecOf(args) };
  },
};

export const FORMS: Builtin = {
  id: 'builtin-forms',
  kind: 'Forms',
  family: 'forms',
  name: 'Forms',
  namespace: 'form',
  description: 'Forms for the user of an agent: the task waits (input required) until the values are submitted and valid; A2UI where the client negotiated it, text otherwise, an interrupt on AG-UI. Agents only.',
  sortOrder: 27,
  config: null,
  operations: [formRequest],
};
