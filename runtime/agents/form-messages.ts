import type { AgentMessage } from '../../actors/index.ts';
import { formSpecOf, type FormField, type FormSpec } from '../builtins/index.ts';
import { PlatformError } from '../core/errors/index.ts';
import type { A2aMessage, A2aSendParams } from './a2a-shapes.ts';

/** The data part of an input-required message that names the form: `{form_id, title, description, schema}`. */
export const FORM = 'platform.form';
/** The data part a client answers a form with: `{form_id?, values}`. */
export const FORM_RESPONSE = 'platform.form_response';
/** The data part of the agent's answer to values it did not take: `{form_id, problems}`. */
export const FORM_RESPONSE_REJECTED = 'platform.form_response_rejected';
/** The media type of A2UI messages in data parts (one message per part). */
export const A2UI_MEDIA_TYPE = 'application/json+a2ui';

export const surfaceOf = (formId: string) => `form-${formId}`;
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
/**
 * A form answer sent as JSON text is parsed on the node's loop, and the request's own limits (size, depth) do not reach
 * inside a string: so at most this many characters, nesting at most FORM_TEXT_DEPTH levels (fields are flat; a
 * deep value parsed, then overflowed the stack of whatever wrote it down).
 */
export const FORM_TEXT_MAX = 64 * 1024;
const FORM_TEXT_DEPTH = 16;

/** Whether `root` nests arrays and objects deeper than `max` levels, walked without recursion. */
function deeperThan(root: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[root, 1]];
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (depth > max) return true;
    for (const child of Object.values(v)) stack.push([child, depth + 1]);
  }
  return false;
}
const pointer = (key: string) => `/values/${key}`;
const literal = (text: string) => ({ literalString: text });

function kindOf(f: FormField): string {
  if (f.type === 'array') return `choose any of: ${f.options!.join(', ')}`;
  if (f.options) return `one of: ${f.options.join(', ')}`;
  if (f.type === 'boolean') return 'yes or no (true/false)';
  if (f.type === 'integer' || f.type === 'number') return `${f.type === 'integer' ? 'a whole number' : 'a number'}${f.min !== null ? `, at least ${f.min}` : ''}${f.max !== null ? `, at most ${f.max}` : ''}`;
  return f.format === 'date' ? 'a day, YYYY-MM-DD' : f.format === 'date-time' ? 'a time, ISO 8601' : f.format === 'email' ? 'an email address' : f.format === 'uri' ? 'a URL' : 'text';
}

/** The form as text, for a client without A2UI: every field, and how to answer. */
export function formText(spec: FormSpec): string {
  const lines = [spec.title, ...(spec.description ? [spec.description] : []), '', 'Please fill in:'];
  for (const f of spec.fields) lines.push(`- ${f.label} (${f.key}; ${kindOf(f)}${f.required ? '; required' : ''})${f.description ? `: ${f.description}` : ''}`);
  lines.push('', `Answer with the values as one JSON object, e.g. {${spec.fields.slice(0, 2).map((f) => `"${f.key}": …`).join(', ')}}, or a data part "${FORM_RESPONSE}": {"values": {...}}.`);
  return lines.join('\n');
}

function component(f: FormField): Record<string, unknown> {
  const label = literal(f.label);
  if (f.type === 'boolean') return { CheckBox: { label, value: { path: pointer(f.key) } } };
  if (f.options) return { MultipleChoice: { selections: { path: pointer(f.key) }, options: f.options.map((o) => ({ label: literal(o), value: o })), maxAllowedSelections: f.type === 'array' ? (f.max ?? f.options.length) : 1 } };
  if (f.format === 'date' || f.format === 'date-time') return { DateTimeInput: { value: { path: pointer(f.key) }, enableDate: true, enableTime: f.format === 'date-time' } };
  const textFieldType = f.type !== 'string' ? 'number' : f.format === 'multiline' ? 'longText' : f.format === 'password' ? 'obscured' : 'shortText';
  return { TextField: { label, text: { path: pointer(f.key) }, textFieldType } };
}

const valueEntry = (key: string, v: unknown) =>
  typeof v === 'boolean' ? { key, valueBoolean: v } : typeof v === 'number' ? { key, valueNumber: v } : { key, valueString: typeof v === 'string' ? v : JSON.stringify(v) };

/**
 * The form as A2UI (v0.8 messages, one per data part): a column of the title, the fields bound to `/values/{key}`,
 * and a submit button whose action (`platform.form_response`) carries every value; the data model holds the defaults.
 */
export function formA2ui(spec: FormSpec, formId: string): Record<string, unknown>[] {
  const surfaceId = surfaceOf(formId);
  const ids = spec.fields.map((f) => `field-${f.key}`);
  const components = [
    { id: 'root', component: { Column: { children: { explicitList: ['title', ...(spec.description ? ['description'] : []), ...ids, 'submit'] } } } },
    { id: 'title', component: { Text: { text: literal(spec.title), usageHint: 'h3' } } },
    ...(spec.description ? [{ id: 'description', component: { Text: { text: literal(spec.description), usageHint: 'body' } } }] : []),
    ...spec.fields.map((f, i) => ({ id: ids[i], component: component(f) })),
    { id: 'submit-label', component: { Text: { text: literal('Submit') } } },
    {
      id: 'submit',
      component: { Button: { child: 'submit-label', primary: true, action: { name: FORM_RESPONSE, context: [{ key: 'form_id', value: literal(formId) }, ...spec.fields.map((f) => ({ key: f.key, value: { path: pointer(f.key) } }))] } } },
    },
  ];
  const defaults = spec.fields.filter((f) => f.default !== undefined).map((f) => valueEntry(f.key, f.default));
  return [
    { surfaceUpdate: { surfaceId, components } },
    { dataModelUpdate: { surfaceId, contents: [{ key: 'values', valueMap: defaults }] } },
    { beginRendering: { surfaceId, root: 'root' } },
  ];
}

/** The input-required message of a form: its text, the form itself, and its A2UI rendering (the gateway keeps the last two for clients that negotiated A2UI). */
export function formMessage(spec: FormSpec, formId: string, at: { taskId: string; contextId: string }): AgentMessage {
  return {
    messageId: `${at.taskId}:form:${formId}`,
    role: 'ROLE_AGENT',
    contextId: at.contextId,
    taskId: at.taskId,
    parts: [
      { text: formText(spec) },
      ...formParts(spec, formId),
    ],
  };
}

/** The form itself and its A2UI rendering, as data parts. `fields` keeps the fields' order (a stored object's keys may not). */
function formParts(spec: FormSpec, formId: string) {
  return [
    { data: { [FORM]: { form_id: formId, title: spec.title, description: spec.description, fields: spec.fields.map((f) => f.key), schema: spec.schema } }, mediaType: 'application/json' },
    ...formA2ui(spec, formId).map((m) => ({ data: m, mediaType: A2UI_MEDIA_TYPE })),
  ];
}

/** The form an input-required message asks for (read back from the message the task shows), or null. */
export function formOf(message: { parts?: { data?: unknown }[] } | null | undefined): { formId: string; spec: FormSpec } | null {
  for (const p of message?.parts ?? []) {
    const f = isObject(p.data) ? p.data[FORM] : undefined;
    if (isObject(f) && typeof f.form_id === 'string' && isObject(f.schema) && isObject(f.schema.properties)) {
      const stored = f.schema.properties;
      const order = Array.isArray(f.fields) ? (f.fields as string[]) : Object.keys(stored);
      const properties = Object.fromEntries(order.map((k) => [k, stored[k]]));
      return { formId: f.form_id, spec: formSpecOf({ title: f.title, ...(typeof f.description === 'string' ? { description: f.description } : {}), fields: { type: 'object', properties, required: f.schema.required } }) };
    }
  }
  return null;
}

export interface FormResponse {
  formId: string | null;
  values: unknown;
}

/**
 * The values a message answers a form with: a `platform.form_response` data part, an A2UI `userAction` of the form's
 * submit button, or (from a client that only speaks text) a text part that is one JSON object. Null: another message.
 */
export function formResponseOf(message: A2aMessage, expectsForm: boolean): FormResponse | null {
  for (const p of message.parts) {
    if (!isObject(p.data)) continue;
    const r = p.data[FORM_RESPONSE];
    if (r !== undefined) {
      if (!isObject(r)) throw new PlatformError('A2A_INVALID_PARAMS', `message.parts: the ${FORM_RESPONSE} data part must be an object {form_id, values}`);
      return { formId: typeof r.form_id === 'string' ? r.form_id : null, values: r.values };
    }
    const action = p.data.userAction;
    if (isObject(action) && action.name === FORM_RESPONSE && isObject(action.context)) {
      const { form_id, ...values } = action.context;
      const surface = typeof action.surfaceId === 'string' && action.surfaceId.startsWith('form-') ? action.surfaceId.slice(5) : null;
      return { formId: typeof form_id === 'string' ? form_id : surface, values };
    }
  }
  if (!expectsForm) return null;
  const first = message.parts.find((p) => (p.text ?? '').trim() !== '')?.text?.trimStart();
  if (!first?.startsWith('{')) return null;
  const size = message.parts.reduce((n, p) => n + (p.text?.length ?? 0), 0);
  if (size > FORM_TEXT_MAX) throw new PlatformError('A2A_INVALID_PARAMS', `message.parts: a form answer sent as text is at most ${FORM_TEXT_MAX} characters of JSON; send larger values as a ${FORM_RESPONSE} data part`);
  let values: unknown;
  try {
    values = JSON.parse(message.parts.map((p) => p.text ?? '').join('').trim());
  } catch {
    return null;
  }
  if (!isObject(values)) return null;
  if (deeperThan(values, FORM_TEXT_DEPTH)) throw new PlatformError('A2A_INVALID_PARAMS', `message.parts: a form answer sent as text nests deeper than ${FORM_TEXT_DEPTH} levels`);
  return { formId: null, values };
}

/**
 * The agent's answer to values it did not take: the task still waits for the form, which comes again with the
 * problems (a renderer shows it again; an AG-UI client gets its interrupt again).
 */
export function formRejectedMessage(params: A2aSendParams, form: { formId: string; spec: FormSpec } | null, formId: string, problems: string[]): A2aMessage {
  return {
    messageId: `${params.message.messageId}:rejected`,
    role: 'ROLE_AGENT',
    taskId: params.message.taskId!,
    contextId: params.message.contextId!,
    parts: [
      { text: `The form was not submitted: ${problems.join('; ')}.` },
      { data: { [FORM_RESPONSE_REJECTED]: { form_id: formId, problems } }, mediaType: 'application/json' },
      ...(form ? formParts(form.spec, form.formId) : []),
    ],
  };
}

const isUiPart = (p: { data?: unknown; mediaType?: string }) => p.mediaType === A2UI_MEDIA_TYPE || (isObject(p.data) && FORM in p.data);
/** Whether a message shows a form (its A2UI parts and the form itself). */
export const showsForm = (m: { parts: { data?: unknown; mediaType?: string }[] }) => m.parts.some(isUiPart);

/**
 * A form's message as a client without the A2UI extension gets it (spec §4.3: payloads are tagged only when
 * negotiated): its text alone, which says every field and how to answer.
 */
export function withoutForm<M extends { parts: { data?: unknown; mediaType?: string }[] }>(m: M): M {
  return showsForm(m) ? { ...m, parts: m.parts.filter((p) => !isUiPart(p)) } : m;
}
