import type { Interrupt, ResumeEntry } from '@ag-ui/core';
import { FORM, FORM_RESPONSE, formOf, GATE_DECISION, PlatformError } from '../../runtime/index.ts';
import type { A2aBackend, A2aCallContext } from './backend.ts';
import type { Message, Task } from './schemas.ts';

/**
 * Approval gates as AG-UI interrupts. A run that stops at a gate is an A2A task in `TASK_STATE_INPUT_REQUIRED` whose
 * status message carries a `platform.gate_decision` data part (spec §6, approval-gate messages); on AG-UI the run ends
 * with RUN_FINISHED and an interrupt outcome naming the gate. The next run answers it in `resume[]`, which becomes the
 * A2A gate decision: a user message to the same task and context with a `platform.gate_decision` data part.
 *
 * The interrupt's id is the gate's id; its `metadata` holds the gate payload as the A2A message carries it, with the
 * task and context ids. A resume entry is `{interruptId, status: 'resolved', payload: {decision: 'approve' | 'deny'}}`
 * (or the decision as a bare string; `argumentsHash` may be echoed from the interrupt and is the gate's own when
 * omitted); `status: 'cancelled'` denies the call.
 *
 * Forms (the Forms built-in) are interrupts too: the interrupt's id is the form's, `responseSchema` its JSON Schema,
 * `metadata` the form and its A2UI messages; the resume entry's payload is the values (or `{values}`), sent to the task
 * as a `platform.form_response` data part and checked there.
 */


/** The gate payload of an input-required status message (the approval-gate contract). */
export interface GatePayload {
  gateId: string;
  tool: string;
  toolCallId: string;
  arguments: unknown;
  argumentsHash: string;
  expiresAt?: string;
  decisions: string[];
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The gate a status message asks about, or null when it asks for something else. */
export function gateOf(message: Message | undefined): GatePayload | null {
  for (const part of message?.parts ?? []) {
    const g = isObject(part.data) ? part.data[GATE_DECISION] : undefined;
    if (isObject(g) && typeof g.gateId === 'string' && typeof g.argumentsHash === 'string') {
      return {
        gateId: g.gateId,
        tool: typeof g.tool === 'string' ? g.tool : '',
        toolCallId: typeof g.toolCallId === 'string' ? g.toolCallId : '',
        arguments: g.arguments,
        argumentsHash: g.argumentsHash,
        ...(typeof g.expiresAt === 'string' ? { expiresAt: g.expiresAt } : {}),
        decisions: Array.isArray(g.decisions) && g.decisions.every((d) => typeof d === 'string') ? (g.decisions as string[]) : ['approve', 'deny'],
      };
    }
  }
  return null;
}

export const messageText = (m: Message | undefined) => (m?.parts ?? []).flatMap((p) => (typeof p.text === 'string' ? [p.text] : [])).join('\n');

/**
 * The interrupt of a task that stopped for input: a gate as a tool-call approval, anything else (an input-required
 * or auth-required state without a gate) as a plain request for input, answered by the next user message.
 */
export function interruptOf(task: { id: string; contextId: string; state: string; message: Message | undefined }): Interrupt {
  const gate = gateOf(task.message);
  const text = messageText(task.message);
  const form = gate ? null : formOf(task.message);
  if (form) {
    const parts = task.message?.parts ?? [];
    return {
      id: form.formId,
      reason: 'input_required',
      ...(text ? { message: text } : {}),
      toolCallId: form.formId,
      responseSchema: form.spec.schema,
      metadata: {
        [FORM]: parts.map((p) => (isObject(p.data) ? p.data[FORM] : undefined)).find((f) => f !== undefined),
        a2ui: parts.filter((p) => p.mediaType === 'application/json+a2ui').map((p) => p.data),
        taskId: task.id,
        contextId: task.contextId,
      },
    };
  }
  if (!gate) {
    return { id: `${task.id}:input`, reason: task.state === 'TASK_STATE_AUTH_REQUIRED' ? 'auth_required' : 'input_required', ...(text ? { message: text } : {}), metadata: { taskId: task.id, contextId: task.contextId } };
  }
  return {
    id: gate.gateId,
    reason: 'tool_call',
    ...(text ? { message: text } : {}),
    ...(gate.toolCallId ? { toolCallId: gate.toolCallId } : {}),
    ...(gate.expiresAt ? { expiresAt: gate.expiresAt } : {}),
    responseSchema: {
      type: 'object',
      properties: { decision: { enum: gate.decisions }, argumentsHash: { type: 'string', const: gate.argumentsHash } },
      required: ['decision'],
      additionalProperties: false,
    },
    metadata: { [GATE_DECISION]: { ...gate, taskId: task.id, contextId: task.contextId } },
  };
}

/** An open gate or form of a thread: the task waiting on it, and the gate's payload (null for a form). */
export interface OpenGate {
  taskId: string;
  contextId: string;
  gate: GatePayload | null;
}

const unknownInterrupt = (id: string, threadId: string) =>
  new PlatformError('AGUI_INTERRUPT_UNKNOWN', `resume: interrupt ${JSON.stringify(id)} is not open in thread ${JSON.stringify(threadId)} (answered, expired, or never issued)`);

/** The caller's task in the thread that waits on the gate an interrupt names (tasks are the caller's own only). */
export async function openGate(backend: Pick<A2aBackend, 'listTasks'>, ctx: A2aCallContext, threadId: string, interruptId: string): Promise<OpenGate> {
  let pageToken: string | undefined;
  do {
    const page = await backend.listTasks({ contextId: threadId, status: 'TASK_STATE_INPUT_REQUIRED', pageSize: 100, historyLength: 0, ...(pageToken ? { pageToken } : {}) }, ctx);
    for (const t of page.tasks as Task[]) {
      const gate = gateOf(t.status.message);
      if (gate?.gateId === interruptId) return { taskId: t.id, contextId: t.contextId, gate };
      if (!gate && formOf(t.status.message)?.formId === interruptId) return { taskId: t.id, contextId: t.contextId, gate: null };
    }
    pageToken = page.nextPageToken || undefined;
  } while (pageToken);
  throw unknownInterrupt(interruptId, threadId);
}

/** The decision a resume entry gives: `cancelled` denies; a resolved entry names one of the gate's decisions. */
export function decisionOf(entry: ResumeEntry, gate: GatePayload): { decision: string; argumentsHash: string } {
  if (entry.status === 'cancelled') return { decision: 'deny', argumentsHash: gate.argumentsHash };
  const p: unknown = entry.payload;
  const decision = typeof p === 'string' ? p : isObject(p) ? p.decision : undefined;
  if (typeof decision !== 'string' || !gate.decisions.includes(decision)) {
    throw new PlatformError('AGUI_INVALID_INPUT', `resume[0].payload: answer interrupt ${entry.interruptId} with {"decision": ${gate.decisions.map((d) => JSON.stringify(d)).join(' | ')}}`);
  }
  const hash = isObject(p) && typeof p.argumentsHash === 'string' ? p.argumentsHash : gate.argumentsHash;
  return { decision, argumentsHash: hash };
}

/** The A2A message a resume entry becomes (sent to the waiting task, in its context): a gate decision or a form's values. */
export function gateDecisionMessage(entry: ResumeEntry, open: OpenGate, messageId: string) {
  if (!open.gate) {
    if (entry.status === 'cancelled') throw new PlatformError('AGUI_INVALID_INPUT', `resume[0]: interrupt ${entry.interruptId} is a form: resolve it with its values as the payload (or cancel the task)`);
    const p: unknown = entry.payload;
    const values = isObject(p) && Object.keys(p).length === 1 && isObject(p.values) ? p.values : p;
    return { messageId, role: 'ROLE_USER', taskId: open.taskId, contextId: open.contextId, parts: [{ data: { [FORM_RESPONSE]: { form_id: entry.interruptId, values } }, mediaType: 'application/json' }] };
  }
  const { decision, argumentsHash } = decisionOf(entry, open.gate);
  return {
    messageId,
    role: 'ROLE_USER',
    taskId: open.taskId,
    contextId: open.contextId,
    parts: [{ data: { [GATE_DECISION]: { gateId: open.gate.gateId, decision, argumentsHash } }, mediaType: 'application/json' }],
  };
}
