import { Ajv, type ValidateFunction } from 'ajv';
import type { WorkflowCondition, WorkflowDefinition, WorkflowStep } from '../../actors/index.ts';
import { PlatformError } from '../core/errors/index.ts';

/** Bounds of a definition (docs/workflows.md). */
export const WORKFLOW_LIMITS = { definitionBytes: 64 * 1024, inputSchemas: 64, steps: 100, idChars: 64, nameChars: 64, descriptionChars: 1024, cases: 20, transitions: 1000, timerSeconds: 7 * 24 * 3600, inputBytes: 64 * 1024, payloadBytes: 16 * 1024 } as const;
export const WORKFLOW_NAME = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;
const STEP_ID = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;
const OPS = new Set<WorkflowCondition['op']>(['equals', 'not_equals', 'exists', 'min', 'max', 'one_of', 'prefix']);

const invalid = (message: string) => new PlatformError('WORKFLOW_INVALID', message);
const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const text = (v: unknown, max: number) => typeof v === 'string' && v.length > 0 && v.length <= max && !v.includes('\0');
const seconds = (v: unknown, max: number) => typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= max;

const KEYS: Record<WorkflowStep['type'], { required: string[]; optional: string[]; refs: string[] }> = {
  tool: { required: ['tool', 'next'], optional: ['arguments', 'on_error'], refs: ['next', 'on_error'] },
  approval: { required: ['summary', 'next'], optional: ['arguments', 'on_deny'], refs: ['next', 'on_deny'] },
  signal: { required: ['signal', 'next'], optional: ['timeout_seconds', 'on_timeout'], refs: ['next', 'on_timeout'] },
  timer: { required: ['seconds', 'next'], optional: [], refs: ['next'] },
  branch: { required: ['cases', 'default'], optional: [], refs: ['default'] },
  succeed: { required: [], optional: ['output'], refs: [] },
  fail: { required: ['error'], optional: [], refs: [] },
};

function checkStep(id: string, raw: unknown, ids: Set<string>): WorkflowStep {
  const at = `steps.${id}`;
  if (!isObject(raw)) throw invalid(`${at}: a step is an object with a type`);
  const type = raw.type as WorkflowStep['type'];
  const spec = Object.hasOwn(KEYS, type) ? KEYS[type] : undefined;
  if (!spec) throw invalid(`${at}.type: one of ${Object.keys(KEYS).join(', ')}`);
  for (const k of Object.keys(raw)) if (k !== 'type' && !spec.required.includes(k) && !spec.optional.includes(k)) throw invalid(`${at}: a ${type} step has no ${k}`);
  for (const k of spec.required) if (raw[k] === undefined) throw invalid(`${at}: a ${type} step needs ${k}`);
  for (const k of spec.refs) if (raw[k] !== undefined && (typeof raw[k] !== 'string' || !ids.has(raw[k] as string))) throw invalid(`${at}.${k}: names no step of this workflow`);
  switch (type) {
    case 'tool':
      if (!text(raw.tool, 128)) throw invalid(`${at}.tool: a tool name`);
      break;
    case 'approval':
      if (!text(raw.summary, 1000)) throw invalid(`${at}.summary: what the human approves, 1 to 1000 characters`);
      break;
    case 'signal':
      if (!text(raw.signal, 64)) throw invalid(`${at}.signal: the signal's name, 1 to 64 characters`);
      if (raw.timeout_seconds !== undefined && !seconds(raw.timeout_seconds, WORKFLOW_LIMITS.timerSeconds)) throw invalid(`${at}.timeout_seconds: 1 to ${WORKFLOW_LIMITS.timerSeconds}`);
      if (raw.on_timeout !== undefined && raw.timeout_seconds === undefined) throw invalid(`${at}.on_timeout: needs timeout_seconds`);
      break;
    case 'timer':
      if (!seconds(raw.seconds, WORKFLOW_LIMITS.timerSeconds)) throw invalid(`${at}.seconds: 1 to ${WORKFLOW_LIMITS.timerSeconds}`);
      break;
    case 'branch': {
      const cases = raw.cases;
      if (!Array.isArray(cases) || cases.length === 0 || cases.length > WORKFLOW_LIMITS.cases) throw invalid(`${at}.cases: 1 to ${WORKFLOW_LIMITS.cases} cases`);
      cases.forEach((c: unknown, i) => {
        if (!isObject(c) || !isObject(c.when) || typeof c.next !== 'string' || !ids.has(c.next)) throw invalid(`${at}.cases.${i}: {when: {path, op, value}, next: <a step>}`);
        if (!text(c.when.path, 256) || !OPS.has(c.when.op as WorkflowCondition['op'])) throw invalid(`${at}.cases.${i}.when: a path and an op (${[...OPS].join(', ')})`);
      });
      break;
    }
    case 'fail':
      if (!text(raw.error, 1000)) throw invalid(`${at}.error: why the run fails, 1 to 1000 characters`);
      break;
    case 'succeed':
      break;
  }
  return raw as unknown as WorkflowStep;
}

/**
 * A workflow definition from its JSON text, checked (docs/workflows.md): size first, then the shape, each step's
 * fields, that every `next` (and `on_error`, `on_deny`, `on_timeout`, branch targets) names a step, and that the input
 * schema compiles. The problem is named in WORKFLOW_INVALID.
 */
export function parseWorkflow(json: string): WorkflowDefinition {
  if (Buffer.byteLength(json) > WORKFLOW_LIMITS.definitionBytes) throw invalid(`a workflow definition is at most ${WORKFLOW_LIMITS.definitionBytes} bytes of JSON`);
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch (err) {
    throw invalid(`the definition is not JSON: ${(err as Error).message}`);
  }
  return checkWorkflow(raw);
}

/** A workflow definition given as a value (the builders' `workflow_save` tool), checked as parseWorkflow checks its text. */
export function checkWorkflow(raw: unknown): WorkflowDefinition {
  if (!isObject(raw)) throw invalid('a workflow is an object: {name, description, start, steps}');
  if (Buffer.byteLength(JSON.stringify(raw)) > WORKFLOW_LIMITS.definitionBytes) throw invalid(`a workflow definition is at most ${WORKFLOW_LIMITS.definitionBytes} bytes of JSON`);
  for (const k of Object.keys(raw)) if (!['name', 'description', 'input', 'start', 'steps'].includes(k)) throw invalid(`a workflow has no ${k}`);
  if (typeof raw.name !== 'string' || !WORKFLOW_NAME.test(raw.name)) throw invalid('name: 1 to 64 lowercase letters, digits and hyphens');
  if (typeof raw.description !== 'string' || raw.description.length > WORKFLOW_LIMITS.descriptionChars) throw invalid(`description: text of at most ${WORKFLOW_LIMITS.descriptionChars} characters`);
  if (!isObject(raw.steps)) throw invalid('steps: an object of steps by id');
  const ids = new Set(Object.keys(raw.steps));
  if (ids.size === 0 || ids.size > WORKFLOW_LIMITS.steps) throw invalid(`steps: 1 to ${WORKFLOW_LIMITS.steps} steps`);
  for (const id of ids) if (!STEP_ID.test(id)) throw invalid(`steps.${id.slice(0, 80)}: a step id is a letter, then letters, digits, _ or - (at most 64)`);
  if (typeof raw.start !== 'string' || !ids.has(raw.start)) throw invalid('start: names no step of this workflow');
  const steps: Record<string, WorkflowStep> = {};
  for (const id of ids) steps[id] = checkStep(id, raw.steps[id], ids);
  if (raw.input !== undefined) {
    if (!isObject(raw.input)) throw invalid('input: a JSON Schema object');
    checkInputSchema(raw.input, 'input', { schemas: 0 });
    inputValidator(raw.input);
  }
  return { name: raw.name, description: raw.description, ...(raw.input !== undefined ? { input: raw.input as Record<string, unknown> } : {}), start: raw.start, steps };
}

/**
 * An input schema is compiled and validated on the node's thread (when the workflow is saved, when a run starts, and
 * by clients of the workflow's tool):
 * - a regular expression of the tenant's over a caller's text could take that thread for seconds (catastrophic
 *   backtracking), so `pattern` and `patternProperties` are refused; lengths, enums and types hold the same ground;
 * - compiling costs about half a millisecond per schema in it (a property's, an item's), so a schema holds at most
 *   WORKFLOW_LIMITS.inputSchemas of them: 1,000 properties took the thread a second.
 */
function checkInputSchema(schema: unknown, at: string, count: { schemas: number }, depth = 0): void {
  if (depth > 32) throw invalid(`${at}: nested more than 32 levels`);
  if (Array.isArray(schema)) return schema.forEach((s, i) => checkInputSchema(s, `${at}.${i}`, count, depth + 1));
  if (!isObject(schema)) return;
  if (++count.schemas > WORKFLOW_LIMITS.inputSchemas) throw invalid(`input: at most ${WORKFLOW_LIMITS.inputSchemas} schemas in all (the input's own, each property's and item's)`);
  for (const [k, v] of Object.entries(schema)) {
    // Under `properties` (and `$defs`, `definitions`) the keys are names, not keywords: only their schemas are looked at.
    if ((k === 'properties' || k === '$defs' || k === 'definitions') && isObject(v)) {
      for (const [name, sub] of Object.entries(v)) checkInputSchema(sub, `${at}.${k}.${name}`, count, depth + 1);
      continue;
    }
    if (k === 'pattern' || k === 'patternProperties') throw invalid(`${at}.${k}: regular expressions are not allowed in a workflow's input schema (use enum, const, minLength and maxLength)`);
    checkInputSchema(v, `${at}.${k}`, count, depth + 1);
  }
}

let ajv: Ajv | undefined;
const compiled = new Map<string, ValidateFunction>();

/** The input schema's validator, compiled once per schema text. */
export function inputValidator(schema: Record<string, unknown>): ValidateFunction {
  const key = JSON.stringify(schema);
  let v = compiled.get(key);
  if (!v) {
    try {
      v = (ajv ??= new Ajv({ allErrors: false, strict: false })).compile(schema);
    } catch (err) {
      throw invalid(`input: not a JSON Schema: ${(err as Error).message}`);
    }
    if (compiled.size > 500) compiled.clear();
    compiled.set(key, v);
  }
  return v;
}

/** A run's input, checked against the workflow's input schema (when it has one). */
export function checkInput(w: WorkflowDefinition, input: unknown): void {
  if (Buffer.byteLength(JSON.stringify(input ?? null)) > WORKFLOW_LIMITS.inputBytes) throw new PlatformError('WORKFLOW_INPUT_INVALID', `a run's input is at most ${WORKFLOW_LIMITS.inputBytes} bytes of JSON`);
  if (!w.input) return;
  const validate = inputValidator(w.input);
  if (!validate(input)) {
    const e = validate.errors?.[0];
    throw new PlatformError('WORKFLOW_INPUT_INVALID', `input${e?.instancePath ? e.instancePath.replaceAll('/', '.') : ''} ${e?.message ?? 'does not match the workflow input schema'}`);
  }
}

/** Whether a run of the workflow calls tools (and so needs an agent or gateway whose tools it calls). */
export const callsTools = (w: WorkflowDefinition) => Object.values(w.steps).some((s) => s.type === 'tool');
