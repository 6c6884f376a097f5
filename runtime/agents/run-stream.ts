import type { AgentTaskContext, AgentTaskEmitted, ToolCallPlan } from '../../actors/index.ts';
import type { AgentScope, Repositories, ThreadScope } from '../../store/index.ts';
import type { ActorStreamItem } from '../core/actor-host/index.ts';
import { answerArtifactId } from '../../actors/index.ts';
import { INTERRUPTED, TERMINAL, type A2aMessage, type A2aStreamResponse, type A2aTask } from './a2a-shapes.ts';
import { isFrame, toolTracker, type RunEvent, type RunToolCall, type RunToolResult } from './run-tools.ts';
import { taskFromContext, taskView } from './task-views.ts';

/** Follows one actor (from any node): its snapshot, then its events and progress; `close` ends the subscription. */
export type Follow = (address: string, onItem: (item: ActorStreamItem) => void) => { ready: Promise<unknown>; close(): Promise<void> };

/**
 * One run as A2A stream frames (spec §4.3): the Task once the run is one (or the one Message of a bare reply), the
 * answer as `artifactUpdate`s — streamed chunks with `append`, then the whole text with `lastChunk` replacing them —
 * and `statusUpdate`s; it ends at a terminal state, an interrupt (input required: the request is not held open while a
 * human decides) or a reply. Frames come from the actor's events wherever it runs
 * (a shard move or a restart of its owner does not break the stream: events resume from the new owner, and a gap is
 * read back from the journal). When the actor is gone already, the task's row answers.
 */
export async function* runFrames(
  deps: { follow: Follow; store: Pick<Repositories, 'agentTasks' | 'agentThreads'> },
  address: string,
  scope: AgentScope,
  run: { taskId: string; contextId: string; resumedGate?: string },
  opts: Pick<RunStreamOptions, 'answered'> = {},
): AsyncGenerator<A2aStreamResponse> {
  for await (const e of runEvents(deps, address, scope, run, opts)) if (isFrame(e)) yield e;
}

/** What a stream that shows tool calls needs: the caller's thread, and the calls a first turn taken in the request planned. */
export interface RunTools {
  thread: ThreadScope;
  calls?: ToolCallPlan[];
}

export interface RunStreamOptions {
  tools?: RunTools;
  /** Told the thread's message id of the answer, with its artifact frame (a blocking send shows it as history). */
  answered?: (messageId: string) => void;
}

/**
 * The frames of runFrames and, with `tools`, the run's tool calls and their results (run-tools.ts), each call before
 * its result and both before the answer that follows them.
 */
export async function* runEvents(
  deps: { follow: Follow; store: Pick<Repositories, 'agentTasks' | 'agentThreads'> },
  address: string,
  scope: AgentScope,
  run: { taskId: string; contextId: string; resumedGate?: string },
  opts: RunStreamOptions = {},
): AsyncGenerator<RunEvent> {
  const { taskId, contextId } = run;
  const tools = opts.tools ? toolTracker(deps, opts.tools.thread, run) : null;
  const told = async () => (tools ? tools.reconcile() : []);
  for (const c of opts.tools?.calls ?? []) yield* tools!.call({ taskId, step: 0, id: c.id, name: c.name, args: c.args });
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
        yield* await told();
        if (!row.visible) yield { message: row.statusMessage as A2aMessage };
        else yield { task: taskView(row, { artifacts: true }) };
        return;
      }
      if (item.type === 'snapshot') {
        const c = item.state.context as unknown as AgentTaskContext;
        if (c.visible) {
          task = taskFromContext(c);
          yield { task };
          yield* await told();
          // Waiting on a human already — unless on the gate just decided, whose outcome is on its way to the task.
          if (INTERRUPTED.has(c.state) && (c.gate === null || c.gate.gateId !== run.resumedGate)) return;
        }
        continue;
      }
      if (item.type === 'progress') {
        const data = item.data as { text?: unknown; step?: number; toolCall?: Omit<RunToolCall, 'taskId' | 'step'>; toolResult?: Omit<RunToolResult, 'taskId' | 'step'> };
        if (data?.toolCall || data?.toolResult) {
          const step = typeof data.step === 'number' ? data.step : 0;
          if (tools && data.toolCall) yield* tools.call({ ...data.toolCall, taskId, step });
          if (tools && data.toolResult) yield* await tools.result({ ...data.toolResult, taskId, step });
          continue;
        }
        const text = data?.text;
        if (!task || answered || typeof text !== 'string' || !text) continue;
        if (tools?.open()) yield* await told();
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
        yield* await told();
        task = taskView(row, { artifacts: true });
        yield { task };
        if (TERMINAL.has(row.state)) return;
        continue;
      }
      if (e.type === 'task.artifact') {
        yield* await told();
        answered = true;
        if (e.messageId) opts.answered?.(e.messageId);
        yield { artifactUpdate: { taskId: task.id, contextId: task.contextId, artifact: { artifactId: e.artifactId, parts: [{ text: e.text }] }, append: false, lastChunk: true } };
      } else if (e.type === 'task.status') {
        if (e.state !== 'TASK_STATE_WORKING') yield* await told();
        yield { statusUpdate: { taskId: task.id, contextId: task.contextId, status: { state: e.state, timestamp: e.at, ...(e.message ? { message: e.message } : {}) } } };
        if (TERMINAL.has(e.state) || INTERRUPTED.has(e.state)) return;
      }
    }
  } finally {
    await sub.close();
  }
}
