import { GATE_DECISION, GATE_DECISION_REJECTED, type A2aMessage, type A2aStreamResponse, type A2aTask } from '../../runtime/index.ts';
import { EXTENSIONS } from './card.ts';

const isGateMessage = (m: A2aMessage) => m.parts.some((p) => p.data !== null && typeof p.data === 'object' && (GATE_DECISION in (p.data as object) || GATE_DECISION_REJECTED in (p.data as object)));

function tag(m: A2aMessage | undefined): A2aMessage | undefined {
  if (!m || !isGateMessage(m) || m.extensions?.includes(EXTENSIONS.approvalGate)) return m;
  return { ...m, extensions: [...(m.extensions ?? []), EXTENSIONS.approvalGate] };
}

function tagTask(t: A2aTask): A2aTask {
  const message = tag(t.status.message);
  return { ...t, status: { ...t.status, ...(message ? { message } : {}) }, ...(t.history ? { history: t.history.map((m) => tag(m)!) } : {}) };
}

/**
 * Approval-gate messages carry the extension's URI only when the request negotiated it (spec §4.3): the runtime
 * stores them untagged, and the gateway tags what it answers.
 */
export function tagGates<T extends A2aStreamResponse | { tasks: A2aTask[] }>(result: T, extensions: readonly string[]): T {
  if (!extensions.includes(EXTENSIONS.approvalGate)) return result;
  if ('task' in result) return { task: tagTask(result.task) } as T;
  if ('message' in result) return { message: tag(result.message)! } as T;
  if ('statusUpdate' in result) {
    const u = result.statusUpdate;
    const message = tag(u.status.message);
    return { statusUpdate: { ...u, status: { ...u.status, ...(message ? { message } : {}) } } } as T;
  }
  if ('tasks' in result) return { ...result, tasks: result.tasks.map(tagTask) };
  return result;
}
