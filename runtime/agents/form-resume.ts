import type { AgentTaskContext } from '../../actors/index.ts';
import type { AgentTaskRow } from '../../store/index.ts';
import type { ActorSystem } from '../core/actor-host/index.ts';
import { isPlatformError, PlatformError } from '../core/errors/index.ts';
import { formProblems, type FormSpec } from '../builtins/index.ts';
import type { A2aCaller, A2aMessage, A2aSendParams } from './a2a-shapes.ts';
import { FORM_RESPONSE, formOf, formRejectedMessage, formResponseOf, type FormResponse } from './form-messages.ts';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Values as an A2UI renderer sends them (a single choice as a one-item list, numbers typed into text fields as text)
 * in the form's own types; anything else is left for the check to refuse.
 */
function typed(spec: FormSpec, values: unknown): unknown {
  if (!isObject(values)) return values;
  const out: Record<string, unknown> = { ...values };
  for (const f of spec.fields) {
    const v = out[f.key];
    if (f.type === 'string' && f.options && Array.isArray(v) && v.length === 1) out[f.key] = v[0];
    else if ((f.type === 'number' || f.type === 'integer') && typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) out[f.key] = Number(v);
  }
  return out;
}

export interface FormAnswer {
  /** The task's form, null when the task waits for none. */
  form: { formId: string; spec: FormSpec } | null;
  response: FormResponse;
}

/**
 * Whether a message answers a form its task waits for: a `platform.form_response` part (or an A2UI action of the
 * form) for the caller's own task, or, to a task waiting for a form, a text that is one JSON object. Null: an
 * ordinary message.
 */
export function formAnswerOf(message: A2aMessage, row: AgentTaskRow | null): FormAnswer | null {
  const form = row?.state === 'TASK_STATE_INPUT_REQUIRED' ? formOf(row.statusMessage as A2aMessage) : null;
  const response = formResponseOf(message, form !== null);
  if (!response && !form) return null;
  if (!message.taskId || !message.contextId) throw new PlatformError('A2A_INVALID_PARAMS', `message: a ${FORM_RESPONSE} needs both taskId and contextId (spec §4.3)`);
  if (!row) throw new PlatformError('A2A_TASK_NOT_FOUND', `task ${message.taskId} not found`);
  if (row.contextId !== message.contextId) throw new PlatformError('A2A_INVALID_PARAMS', `message.contextId: task ${row.id} is not in context ${message.contextId}`);
  return { form, response: response ?? { formId: null, values: undefined } };
}

/**
 * Submits a form's values to the task waiting for them: checked against the form first, then sent to the task's
 * actor, which takes them only while it waits for that form. The agent's rejection when they changed nothing.
 */
export async function submitForm(
  deps: { actors: Pick<ActorSystem, 'ask'>; now: () => number },
  c: A2aCaller,
  params: A2aSendParams,
  address: string,
  a: FormAnswer,
): Promise<A2aMessage | null> {
  const reject = (problems: string[]) => formRejectedMessage(params, a.form, a.form?.formId ?? a.response.formId ?? '', problems);
  if (!a.form) return reject(['this task is not waiting for a form']);
  if (a.response.formId !== null && a.response.formId !== a.form.formId) return reject([`this task waits for form ${a.form.formId}, not ${a.response.formId}`]);
  if (a.response.values === undefined) return reject([`answer the form's fields as one JSON object (or a ${FORM_RESPONSE} data part)`]);
  const values = typed(a.form.spec, a.response.values);
  const problems = formProblems(a.form.spec, values);
  if (problems.length) return reject(problems);
  try {
    const after = await deps.actors.ask(address, { type: 'FORM_SUBMITTED', toolCallId: a.form.formId, values, at: new Date(deps.now()).toISOString(), by: c.principalId });
    // Unchanged: the run had moved on (canceled, or the form answered a moment before).
    if ((after.context as unknown as AgentTaskContext).form?.toolCallId === a.form.formId || after.status !== 'active') return reject(['this task is no longer waiting for that form']);
  } catch (err) {
    if (isPlatformError(err, 'PLT_ACTOR_NOT_FOUND')) return reject(['the task has ended']);
    throw err;
  }
  return null;
}
