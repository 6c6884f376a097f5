import { createHash } from 'node:crypto';
import { answerArtifactId, type AgentTaskContext } from '../../actors/index.ts';
import { taskRowWrite, type AgentTaskRow, type Repositories, type ThreadScope } from '../../store/index.ts';
import type { RowProjection } from '../core/actor-host/index.ts';
import { instantOf } from '../core/clock/index.ts';
import { PlatformError } from '../core/errors/index.ts';
import type { A2aArtifact, A2aMessage, A2aTask, A2aTaskState } from './a2a-shapes.ts';

/** Messages of a task's history when the caller does not say how many (A2A: the server's default). */
export const DEFAULT_HISTORY = 100;

const SAFE_KEY = /^[A-Za-z0-9_-][A-Za-z0-9_-]{0,127}$/;
/**
 * The task part of an AgentTask's address. A task id is the client's to choose (spec §4.3) and may hold anything an
 * address may not; such ids, and ids that look like the hashed form, are addressed by a hash of the id.
 */
export const taskKey = (taskId: string) => (SAFE_KEY.test(taskId) && !taskId.startsWith('h_') ? taskId : `h_${createHash('sha256').update(taskId).digest('base64url')}`);

export const answerArtifact = (taskId: string, text: string): A2aArtifact => ({ artifactId: answerArtifactId(taskId), parts: [{ text }] });

/**
 * Writes an AgentTask's row in each turn's own statement: what GetTask and ListTasks read on any node. A bare reply
 * keeps its row hidden, with the reply as its status message (a waiting SendMessage reads it there). The turn that
 * ends on the answer writes the answer to the thread too (agentSteps leaves it to this statement): the task's end and
 * its answer commit together, in one round trip.
 */
export const agentTaskProjection: RowProjection = ({ after }) => {
  const c = after.context as unknown as AgentTaskContext;
  const answered = after.value === 'answered';
  const reply: A2aMessage | null = answered && c.answer ? { messageId: c.answer.messageId, role: 'ROLE_AGENT', parts: [{ text: c.answer.text }], contextId: c.contextId } : null;
  const ended = (answered || after.value === 'completed') && c.answer;
  const record = ended ? { messageId: c.answer!.messageId, taskId: c.taskId, kind: 'agent' as const, body: answerMessage(c) } : undefined;
  return taskRowWrite({ accountId: c.accountId, agentId: c.agentId }, c.taskId, {
    contextId: c.contextId,
    ownerId: c.caller.principalId,
    visible: c.visible,
    state: answered ? 'TASK_STATE_COMPLETED' : c.state,
    statusMessage: reply ?? c.statusMessage,
    statusAt: c.statusAt,
    artifacts: c.state === 'TASK_STATE_COMPLETED' && c.answer ? [answerArtifact(c.taskId, c.answer.text)] : [],
  }, record);
};

/** The answer as the thread keeps it (and as a task's history shows it). */
export const answerMessage = (c: Pick<AgentTaskContext, 'answer' | 'contextId' | 'taskId' | 'visible'>): A2aMessage => ({
  messageId: c.answer?.messageId ?? '',
  role: 'ROLE_AGENT',
  parts: [{ text: c.answer?.text ?? '' }],
  contextId: c.contextId,
  ...(c.visible ? { taskId: c.taskId } : {}),
});

/** A task as the wire shows it, from its row (and its history, when asked for). */
export function taskView(row: AgentTaskRow, opts: { artifacts: boolean; history?: A2aMessage[] }): A2aTask {
  return {
    id: row.id,
    contextId: row.contextId,
    status: { state: row.state as A2aTaskState, timestamp: row.statusAt, ...(row.statusMessage ? { message: row.statusMessage as A2aMessage } : {}) },
    ...(opts.artifacts ? { artifacts: row.artifacts as A2aArtifact[] } : {}),
    ...(opts.history ? { history: opts.history } : {}),
  };
}

/** A task as a live actor shows it (streams start from the actor's snapshot, in step with its events). */
export function taskFromContext(c: AgentTaskContext): A2aTask {
  return {
    id: c.taskId,
    contextId: c.contextId,
    status: { state: c.state, timestamp: c.statusAt, ...(c.statusMessage ? { message: c.statusMessage } : {}) },
    artifacts: c.state === 'TASK_STATE_COMPLETED' && c.answer ? [answerArtifact(c.taskId, c.answer.text)] : [],
  };
}

/** The user and agent messages of a task, last `length` of them (0: none, so the key is left out). */
export async function historyOf(store: Pick<Repositories, 'agentThreads'>, scope: ThreadScope, row: AgentTaskRow, length: number | undefined): Promise<A2aMessage[] | undefined> {
  const n = length ?? DEFAULT_HISTORY;
  if (n === 0) return undefined;
  const records = await store.agentThreads.ofTask(scope, row.contextId, row.id, Math.min(n, 1000));
  return records.map((r) => r.body as A2aMessage);
}

/** ListTasks page tokens: where the last page ended (status time and id), opaque to the client. */
export const pageToken = (row: AgentTaskRow) => Buffer.from(JSON.stringify([row.statusAt, row.id])).toString('base64url');
export function readPageToken(token: string): { statusAt: string; id: string } {
  try {
    const v = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as unknown;
    // The time as this server wrote it (toISOString), never one the database would refuse.
    if (Array.isArray(v) && v.length === 2 && typeof v[0] === 'string' && instantOf(v[0]) === v[0] && typeof v[1] === 'string') return { statusAt: v[0], id: v[1] };
  } catch {
    // fall through: the same answer as any other token this server never issued
  }
  throw new PlatformError('A2A_INVALID_PARAMS', 'pageToken: not a token this server issued (pass nextPageToken from the previous page as it is)');
}
