import type { AgentTaskContext, AgentTaskEmitted } from '../../actors/index.ts';
import type { AgentScope, Repositories } from '../../store/index.ts';
import type { ActorStreamItem } from '../core/actor-host/index.ts';
import { answerArtifactId } from '../../actors/index.ts';
import { TERMINAL, type A2aMessage, type A2aStreamResponse, type A2aTask } from './a2a-shapes.ts';
import { taskFromContext, taskView } from './task-views.ts';

/** Follows one actor (from any node): its snapshot, then its events and progress; `close` ends the subscription. */
export type Follow = (address: string, onItem: (item: ActorStreamItem) => void) => { ready: Promise<unknown>; close(): Promise<void> };

/**
 * One run as A2A stream frames (spec §4.3): the Task once the run is one (or the one Message of a bare reply), the
 * answer as `artifactUpdate`s — streamed chunks with `append`, then the whole text with `lastChunk` replacing them —
 * and `statusUpdate`s; it ends at a terminal state or a reply. Frames come from the actor's events wherever it runs
 * (a shard move or a restart of its owner does not break the stream: events resume from the new owner, and a gap is
 * read back from the journal). When the actor is gone already, the task's row answers.
 */
export async function* runFrames(
  deps: { follow: Follow; store: Pick<Repositories, 'agentTasks'> },
  address: string,
  scope: AgentScope,
  run: { taskId: string; contextId: string },
): AsyncGenerator<A2aStreamResponse> {
  const { taskId, contextId } = run;
  const queue: (ActorStreamItem | { type: 'gone' })[] = [];
  let wake: (() => void) | null = null;
  const push = (item: ActorStreamItem | { type: 'gone' }) => {
    queue.push(item);
    wake?.();
  };
  const sub = deps.follow(address, push);
  sub.ready.then(
    (state) => state === null && push({ type: 'gone' }),
    () => push({ type: 'gone' }),
  );
  let task: A2aTask | null = null;
  let chunked = false;
  // Progress and events travel on separate subjects (no order between them on NATS): a chunk arriving after the
  // whole answer was sent is dropped.
  let answered = false;
  try {
    for (;;) {
      if (!queue.length) await new Promise<void>((r) => (wake = r));
      wake = null;
      const item = queue.shift()!;
      if (item.type === 'gone') {
        // Finished before (or while) we looked: the row holds the outcome.
        const row = await deps.store.agentTasks.get(scope, taskId);
        if (!row) return;
        if (!row.visible) yield { message: row.statusMessage as A2aMessage };
        else yield { task: taskView(row, { artifacts: true }) };
        return;
      }
      if (item.type === 'snapshot') {
        const c = item.state.context as unknown as AgentTaskContext;
        if (c.visible) {
          task = taskFromContext(c);
          yield { task };
        }
        continue;
      }
      if (item.type === 'progress') {
        const text = (item.data as { text?: unknown })?.text;
        if (!task || answered || typeof text !== 'string' || !text) continue;
        yield { artifactUpdate: { taskId: task.id, contextId: task.contextId, artifact: { artifactId: answerArtifactId(task.id), parts: [{ text }] }, append: chunked, lastChunk: false } };
        chunked = true;
        continue;
      }
      const e = item.event as AgentTaskEmitted;
      if (e.type === 'task.reply') {
        yield { message: e.message };
        return;
      }
      if (e.type === 'task.visible') {
        if (task) continue;
        task = { id: taskId, contextId, status: { state: 'TASK_STATE_WORKING', timestamp: e.at }, artifacts: [] };
        yield { task };
        continue;
      }
      if (!task) {
        // A run that failed or was canceled before it called a tool is a task too: show it before its status.
        const row = await deps.store.agentTasks.get(scope, taskId);
        if (!row) return;
        task = taskView(row, { artifacts: true });
        yield { task };
        if (TERMINAL.has(row.state)) return;
        continue;
      }
      if (e.type === 'task.artifact') {
        answered = true;
        yield { artifactUpdate: { taskId: task.id, contextId: task.contextId, artifact: { artifactId: e.artifactId, parts: [{ text: e.text }] }, append: false, lastChunk: true } };
      } else if (e.type === 'task.status') {
        yield { statusUpdate: { taskId: task.id, contextId: task.contextId, status: { state: e.state, timestamp: e.at, ...(e.message ? { message: e.message } : {}) } } };
        if (TERMINAL.has(e.state)) return;
      }
    }
  } finally {
    await sub.close();
  }
}
