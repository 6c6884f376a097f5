import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { parse as parseYaml } from 'yaml';

/**
 * The scripted model's rule language: a deterministic stand-in for a language model, for offline use and tests. It
 * is a model of its own (it answers as `scripted/<name>`), never presented as a real one. The first rule whose
 * `when` holds for the conversation answers; every condition and template is read in one pass over the text, so no
 * message can make matching slow. docs/scripted-model.md describes the language with examples.
 */
export interface ScriptedRules {
  name: string;
  rules: Rule[];
}

export interface Rule {
  when?: {
    /** Each of these occurs in the last user message (case-insensitive). */
    contains?: string | string[];
    /** At least one of these occurs in it. */
    any?: string[];
    /** It holds at least this many numbers. */
    numbers?: number;
    /** The request offers a tool of this name. */
    tool?: string;
    /** The conversation's last message is a tool result (of this tool, when a name is given). */
    after_tool?: string | boolean;
  };
  /** Answer with this text (a template); streamed `chunk` words at a time, `repeat` times over. */
  reply?: string;
  chunk?: number;
  repeat?: number;
  /** Pause between streamed chunks, in milliseconds. */
  delay_ms?: number;
  /** Call a tool; each argument is a template (one that is a single number placeholder stays a number). */
  call?: { tool: string; arguments?: Record<string, unknown> };
}

const template = { type: 'string', maxLength: 100_000 };
const schema = {
  type: 'object',
  additionalProperties: false,
  required: ['rules'],
  properties: {
    name: { type: 'string', pattern: '^[a-z0-9][a-z0-9._-]{0,62}$' },
    rules: {
      type: 'array',
      minItems: 1,
      maxItems: 1000,
      items: {
        type: 'object',
        additionalProperties: false,
        properties: {
          when: {
            type: 'object',
            additionalProperties: false,
            properties: {
              contains: { oneOf: [{ type: 'string', minLength: 1 }, { type: 'array', items: { type: 'string', minLength: 1 }, minItems: 1 }] },
              any: { type: 'array', items: { type: 'string', minLength: 1 }, minItems: 1 },
              numbers: { type: 'integer', minimum: 1, maximum: 100 },
              tool: { type: 'string', minLength: 1 },
              after_tool: { oneOf: [{ type: 'string', minLength: 1 }, { type: 'boolean' }] },
            },
          },
          reply: template,
          chunk: { type: 'integer', minimum: 1, maximum: 10_000 },
          repeat: { type: 'integer', minimum: 1, maximum: 10_000 },
          delay_ms: { type: 'integer', minimum: 0, maximum: 1000 },
          call: {
            type: 'object',
            additionalProperties: false,
            required: ['tool'],
            properties: { tool: { type: 'string', minLength: 1 }, arguments: { type: 'object' } },
          },
        },
        oneOf: [{ required: ['reply'], not: { required: ['call'] } }, { required: ['call'], not: { required: ['reply'] } }],
      },
    },
  },
} as const;

// Compiled on first use, and not checked against the meta-schema (a schema of ours): that check alone compiles the
// meta-schema, tens of milliseconds of a node's start (the demo rules are read at start).
let validator: ValidateFunction | undefined;
const validate = (doc: unknown) => (validator ??= new Ajv({ allErrors: true, strict: false, validateSchema: false }).compile(schema))(doc);

export class RulesError extends Error {
  override readonly name = 'RulesError';
}

/** Parses and validates a rules file (YAML or JSON); every problem is reported with its path. */
export function parseRules(text: string, fallbackName = 'scripted'): ScriptedRules {
  let doc: unknown;
  try {
    doc = parseYaml(text, { strict: true, uniqueKeys: true, maxAliasCount: 100 });
  } catch (err) {
    throw new RulesError(`the rules are not valid YAML: ${(err as Error).message.split('\n')[0]}`);
  }
  if (!validate(doc)) {
    const problems = [...new Set((validator!.errors ?? []).filter((e: ErrorObject) => e.keyword !== 'oneOf' || e.instancePath.split('/').length === 3).map((e: ErrorObject) => `${e.instancePath || '/'}: ${e.keyword === 'oneOf' ? 'a rule has exactly one of `reply` and `call`' : e.message}`))];
    throw new RulesError(`invalid rules: ${problems.join('; ')}`);
  }
  const d = doc as { name?: string; rules: Rule[] };
  return { name: d.name ?? fallbackName, rules: d.rules };
}

/** A conversation as the model sees it, reduced to what rules read. */
export interface Conversation {
  /** The text of the last user message ('' when there is none). */
  lastUser: string;
  /** The last message when it is a tool result: the tool's name (when known) and its content. */
  toolResult: { tool: string | null; content: string } | null;
  /** Names of the tools the request offers. */
  tools: string[];
}

export type Answer =
  | { kind: 'reply'; text: string; chunk: number; delayMs: number }
  | { kind: 'call'; tool: string; arguments: Record<string, unknown> };

/** The numbers of a text, in order (one linear scan). */
export function numbersOf(text: string): number[] {
  return Array.from(text.matchAll(/-?\d+(?:\.\d+)?/g), (m) => Number(m[0]));
}

const lower = (s: string) => s.toLowerCase();

/** What rules read of a conversation, computed once per answer: each is a pass over a text of up to 1 MiB. */
interface Reading {
  numbers: number[];
  /** The last user message in lower case. */
  text: string;
}

function holds(when: Rule['when'], c: Conversation, { numbers, text }: Reading): boolean {
  if (!when) return true;
  const all = when.contains === undefined ? [] : Array.isArray(when.contains) ? when.contains : [when.contains];
  if (!all.every((w) => text.includes(lower(w)))) return false;
  if (when.any && !when.any.some((w) => text.includes(lower(w)))) return false;
  if (when.numbers !== undefined && numbers.length < when.numbers) return false;
  if (when.tool !== undefined && !c.tools.includes(when.tool)) return false;
  if (when.after_tool !== undefined && when.after_tool !== false) {
    if (!c.toolResult) return false;
    if (typeof when.after_tool === 'string' && c.toolResult.tool !== when.after_tool) return false;
  } else if (when.after_tool === false && c.toolResult) return false;
  return true;
}

/** The value of one placeholder: `text`, `number.N`, `after:WORD`, `result`, `tools`; unknown ones are empty. */
function placeholder(name: string, c: Conversation, { numbers, text }: Reading): string | number {
  if (name === 'text') return c.lastUser;
  if (name === 'result') return c.toolResult?.content ?? '';
  if (name === 'tools') return c.tools.join(', ');
  if (name.startsWith('number.')) return numbers[Number(name.slice(7)) - 1] ?? '';
  if (name.startsWith('after:')) {
    const at = text.indexOf(lower(name.slice(6)));
    return at < 0 ? '' : c.lastUser.slice(at + name.length - 6).trim();
  }
  return '';
}

/** Fills `{{...}}` placeholders in one pass; a template that is exactly one placeholder keeps a number a number. */
export function fill(t: string, c: Conversation, r: Reading): string | number {
  const whole = t.startsWith('{{') && t.endsWith('}}') && t.indexOf('{{', 2) < 0 ? t.slice(2, -2).trim() : null;
  if (whole !== null) return placeholder(whole, c, r);
  let out = '';
  let i = 0;
  for (;;) {
    const open = t.indexOf('{{', i);
    const close = open < 0 ? -1 : t.indexOf('}}', open + 2);
    if (open < 0 || close < 0) return out + t.slice(i);
    out += t.slice(i, open) + String(placeholder(t.slice(open + 2, close).trim(), c, r));
    i = close + 2;
  }
}

function fillDeep(v: unknown, c: Conversation, r: Reading): unknown {
  if (typeof v === 'string') return fill(v, c, r);
  if (Array.isArray(v)) return v.map((x) => fillDeep(x, c, r));
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, fillDeep(x, c, r)]));
  return v;
}

/** The answer of the first rule that holds; none holding is a plain reply saying so. */
export function answer(rules: ScriptedRules, c: Conversation): Answer {
  const reading: Reading = { numbers: numbersOf(c.lastUser), text: lower(c.lastUser) };
  for (const r of rules.rules) {
    if (!holds(r.when, c, reading)) continue;
    if (r.call) return { kind: 'call', tool: r.call.tool, arguments: fillDeep(r.call.arguments ?? {}, c, reading) as Record<string, unknown> };
    const text = String(fill(r.reply!, c, reading));
    return { kind: 'reply', text: r.repeat ? Array(r.repeat).fill(text).join(' ') : text, chunk: r.chunk ?? 1, delayMs: r.delay_ms ?? 0 };
  }
  return { kind: 'reply', text: `No rule of the scripted model "${rules.name}" matches this message.`, chunk: 1, delayMs: 0 };
}
