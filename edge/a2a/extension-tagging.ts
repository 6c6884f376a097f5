import { GATE_DECISION, GATE_DECISION_REJECTED, showsForm, withoutForm, type A2aMessage, type A2aStreamResponse, type A2aTask } from '../../runtime/index.ts';
import { EXTENSIONS } from './card.ts';

const isGateMessage = (m: A2aMessage) => m.parts.some((p) => p.data !== null && typeof p.data === 'object' && (GATE_DECISION in (p.data as object) || GATE_DECISION_REJECTED in (p.data as object)));
const withExtension = (m: A2aMessage, uri: string): A2aMessage => (m.extensions?.includes(uri) ? m : { ...m, extensions: [...(m.extensions ?? []), uri] });

/**
 * A message as the request's extensions have it (spec §4.3: payloads are tagged with an extension's URI only when it
 * was negotiated). The runtime stores messages untagged: an approval-gate message gets its extension's URI; a form
 * keeps its A2UI parts with the A2UI URI, or, without A2UI, is its text request alone.
 */
function shape(m: A2aMessage | undefined, extensions: readonly string[]): A2aMessage | undefined {
  if (!m) return m;
  let out = m;
  if (extensions.includes(EXTENSIONS.approvalGate) && isGateMessage(out)) out = withExtension(out, EXTENSIONS.approvalGate);
  if (showsForm(out)) out = extensions.includes(EXTENSIONS.a2ui) ? withExtension(out, EXTENSIONS.a2ui) : withoutForm(out);
  return out;
}

function shapeTask(t: A2aTask, extensions: readonly string[]): A2aTask {
  const message = shape(t.status.message, extensions);
  return { ...t, status: { ...t.status, ...(message ? { message } : {}) }, ...(t.history ? { history: t.history.map((m) => shape(m, extensions)!) } : {}) };
}

/** Every message of an answer (a task, its status, its history, a message, a list of tasks) shaped for the request's extensions. */
export function tagExtensions<T extends A2aStreamResponse | { tasks: A2aTask[] }>(result: T, extensions: readonly string[]): T {
  if ('task' in result) return { task: shapeTask(result.task, extensions) } as T;
  if ('message' in result) return { message: shape(result.message, extensions)! } as T;
  if ('statusUpdate' in result) {
    const u = result.statusUpdate;
    const message = shape(u.status.message, extensions);
    return { statusUpdate: { ...u, status: { ...u.status, ...(message ? { message } : {}) } } } as T;
  }
  if ('tasks' in result) return { ...result, tasks: result.tasks.map((t) => shapeTask(t, extensions)) };
  return result;
}
