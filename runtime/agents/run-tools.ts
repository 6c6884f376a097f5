import type { Repositories, ThreadScope } from '../../store/index.ts';
import type { A2aStreamResponse } from './a2a-shapes.ts';
import { HISTORY_WINDOW, type ToolCallsBody, type ToolResultsBody } from './thread-history.ts';

/** A tool call of a run, as its streams see it: the model's call id, within the step that asked for it. */
export interface RunToolCall {
  taskId: string;
  step: number;
  id: string;
  name: string;
  args: unknown;
}

/** What a tool call returned (as the model reads it: text, cut at the platform's limit). */
export interface RunToolResult {
  taskId: string;
  step: number;
  id: string;
  name: string;
  isError: boolean;
  output: string;
}

/**
 * One item of a run's stream: an A2A frame, or a tool call or its result. A2A's stream carries only the frames (spec
 * §4.3 has no tool event); AG-UI shows the calls too.
 */
export type RunEvent = A2aStreamResponse | { toolCall: RunToolCall } | { toolResult: RunToolResult };

export const isFrame = (e: RunEvent): e is A2aStreamResponse => !('toolCall' in e) && !('toolResult' in e);

const STEP = /\/step-(\d+)(?:\/results)?$/;

/**
 * The tool calls and results of one run, each told once and every result after its call. They come live as the
 * tool round's progress, which is ephemeral and not ordered with the actor's events: a subscriber that came late
 * (progress before its snapshot is not delivered) or whose progress arrived after the run's end would miss some. The
 * thread is the record (the model turn writes its calls before the round starts, the round its results before the
 * run goes on), so `reconcile` reads the task's tool records from it and tells what was not told yet: on the
 * snapshot, before the answer or a final status, and when a result comes for a call not seen.
 */
export function toolTracker(deps: { store: Pick<Repositories, 'agentThreads'> }, thread: ThreadScope, run: { taskId: string; contextId: string }) {
  const calls = new Set<string>();
  const results = new Set<string>();
  const key = (step: number, id: string) => `${step}:${id}`;

  function call(c: RunToolCall): RunEvent[] {
    const k = key(c.step, c.id);
    if (calls.has(k)) return [];
    calls.add(k);
    return [{ toolCall: c }];
  }

  async function reconcile(): Promise<RunEvent[]> {
    const out: RunEvent[] = [];
    const records = await deps.store.agentThreads.ofTask(thread, run.contextId, run.taskId, HISTORY_WINDOW, ['tool_calls', 'tool_results']);
    for (const r of records) {
      const step = Number(STEP.exec(r.messageId)?.[1] ?? 0);
      if (r.kind === 'tool_calls') {
        for (const c of (r.body as ToolCallsBody).calls) out.push(...call({ taskId: run.taskId, step, id: c.id, name: c.name, args: c.args }));
      } else {
        for (const x of (r.body as ToolResultsBody).results) out.push(...settled({ taskId: run.taskId, step, ...x }));
      }
    }
    return out;
  }

  function settled(r: RunToolResult): RunEvent[] {
    const k = key(r.step, r.id);
    if (results.has(k) || !calls.has(k)) return [];
    results.add(k);
    return [{ toolResult: r }];
  }

  return {
    /** A call announced live (or planned by a first turn). */
    call,
    /** A result announced live; its call is read from the thread first when it was missed. */
    async result(r: RunToolResult): Promise<RunEvent[]> {
      const before = calls.has(key(r.step, r.id)) ? [] : await reconcile();
      return [...before, ...settled(r)];
    },
    /** Whether a call was told whose result was not. */
    open: () => calls.size > results.size,
    reconcile,
  };
}

export type ToolTracker = ReturnType<typeof toolTracker>;
