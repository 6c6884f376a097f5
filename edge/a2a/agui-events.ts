import { EventType, type BaseEvent, type RunFinishedOutcome } from '@ag-ui/core';
import type { RunEvent } from './backend.ts';
import { interruptOf, messageText } from './agui-gates.ts';
import type { Message, Task } from './schemas.ts';

/**
 * One agent run as AG-UI events (the event half of the AG-UI route, A2A-RPC-03). The run's stream (A2A frames plus
 * tool calls and results, runtime/agents run-tools.ts) becomes, in an order a strict client accepts:
 * - RUN_STARTED first;
 * - the agent's text as TEXT_MESSAGE_START / CONTENT / END: a bare reply as one message with one content event, a
 *   task's streamed chunks as content deltas, its whole answer (A2A's last chunk) completing the message it streamed
 *   (only the part not streamed yet is sent; chunks missed before the client subscribed make it a message of its own);
 * - each tool call as TOOL_CALL_START / ARGS (the arguments as one JSON delta) / END, its result as TOOL_CALL_RESULT;
 *   text open when a call comes is ended first;
 * - the end: RUN_FINISHED (outcome success, with the task's ids as `result`; cancelled for a canceled task; an
 *   interrupt for a task that stopped for input, agui-gates.ts), or RUN_ERROR for a failed or rejected task with its
 *   status message (code: the platform code that message starts with, else TASK_FAILED / TASK_REJECTED).
 * Nothing follows the end.
 */
export class AguiRun {
  #text: { id: string; sent: string } | null = null;
  #messages = 0;
  #answered = false;
  #ended = false;

  constructor(readonly ids: { threadId: string; runId: string }) {}

  get ended() {
    return this.#ended;
  }

  start(): BaseEvent[] {
    return [{ type: EventType.RUN_STARTED, threadId: this.ids.threadId, runId: this.ids.runId } as BaseEvent];
  }

  /** The AG-UI events of one item of the run's stream. */
  next(e: RunEvent): BaseEvent[] {
    if (this.#ended) return [];
    if ('toolCall' in e) {
      const c = e.toolCall;
      return [
        ...this.#endText(),
        { type: EventType.TOOL_CALL_START, toolCallId: c.id, toolCallName: c.name } as BaseEvent,
        { type: EventType.TOOL_CALL_ARGS, toolCallId: c.id, delta: JSON.stringify(c.args ?? {}) } as BaseEvent,
        { type: EventType.TOOL_CALL_END, toolCallId: c.id } as BaseEvent,
      ];
    }
    if ('toolResult' in e) {
      const r = e.toolResult;
      return [...this.#endText(), { type: EventType.TOOL_CALL_RESULT, messageId: `${r.id}:result`, toolCallId: r.id, content: r.output, role: 'tool' } as BaseEvent];
    }
    if ('message' in e) return [...this.#whole(e.message.messageId, messageText(e.message)), ...this.#finish({ type: 'success' })];
    if ('artifactUpdate' in e) {
      const u = e.artifactUpdate;
      const text = messageText({ parts: u.artifact.parts } as Message);
      return u.lastChunk ? this.#answer(`${u.taskId}:answer`, text) : this.#chunk(u.taskId, text);
    }
    if ('task' in e) return this.#state(e.task, e.task.status.state, e.task.status.message);
    const s = e.statusUpdate;
    return this.#state({ id: s.taskId, contextId: s.contextId }, s.status.state, s.status.message);
  }

  /** The run's end on a failure (of the task, or of its stream): RUN_ERROR. */
  fail(message: string, code: string): BaseEvent {
    this.#ended = true;
    return { type: EventType.RUN_ERROR, message, code } as BaseEvent;
  }

  #chunk(taskId: string, text: string): BaseEvent[] {
    if (!text || this.#answered) return [];
    const out: BaseEvent[] = [];
    if (!this.#text) {
      this.#text = { id: `${taskId}:text-${++this.#messages}`, sent: '' };
      out.push({ type: EventType.TEXT_MESSAGE_START, messageId: this.#text.id, role: 'assistant' } as BaseEvent);
    }
    this.#text.sent += text;
    out.push({ type: EventType.TEXT_MESSAGE_CONTENT, messageId: this.#text.id, delta: text } as BaseEvent);
    return out;
  }

  /** The whole answer: completes the message that streamed it, or is a message of its own. */
  #answer(id: string, text: string): BaseEvent[] {
    if (this.#answered) return [];
    const open = this.#text;
    if (open && text.startsWith(open.sent)) {
      const rest = text.slice(open.sent.length);
      this.#answered = true;
      return [...(rest ? [{ type: EventType.TEXT_MESSAGE_CONTENT, messageId: open.id, delta: rest } as BaseEvent] : []), ...this.#endText()];
    }
    return [...this.#endText(), ...this.#whole(id, text)];
  }

  #whole(id: string, text: string): BaseEvent[] {
    this.#answered = true;
    return [
      { type: EventType.TEXT_MESSAGE_START, messageId: id, role: 'assistant' } as BaseEvent,
      ...(text ? [{ type: EventType.TEXT_MESSAGE_CONTENT, messageId: id, delta: text } as BaseEvent] : []),
      { type: EventType.TEXT_MESSAGE_END, messageId: id } as BaseEvent,
    ];
  }

  #endText(): BaseEvent[] {
    const open = this.#text;
    if (!open) return [];
    this.#text = null;
    return [{ type: EventType.TEXT_MESSAGE_END, messageId: open.id } as BaseEvent];
  }

  /** A task's state: only an end or an interrupt shows. */
  #state(task: Pick<Task, 'id' | 'contextId'> & { artifacts?: Task['artifacts'] }, state: string, message: Message | undefined): BaseEvent[] {
    const ids = { taskId: task.id, contextId: task.contextId, state };
    switch (state) {
      case 'TASK_STATE_COMPLETED': {
        // A task seen only when it had ended already (its snapshot) brings its answer as an artifact.
        const answer = (task.artifacts ?? []).map((a) => messageText({ parts: a.parts } as Message)).join('\n');
        const text = this.#answered || !task.artifacts ? [] : this.#answer(`${task.id}:answer`, answer);
        return [...text, ...this.#endText(), ...this.#finish({ type: 'success' }, ids)];
      }
      case 'TASK_STATE_CANCELED':
        return [...this.#endText(), ...this.#finish({ type: 'cancelled' }, ids)];
      case 'TASK_STATE_INPUT_REQUIRED':
      case 'TASK_STATE_AUTH_REQUIRED':
        return [...this.#endText(), ...this.#finish({ type: 'interrupt', interrupts: [interruptOf({ id: task.id, contextId: task.contextId, state, message })] }, ids)];
      case 'TASK_STATE_FAILED':
      case 'TASK_STATE_REJECTED': {
        const text = messageText(message) || `the task ended ${state === 'TASK_STATE_FAILED' ? 'failed' : 'rejected'}`;
        const code = /^([A-Z][A-Z0-9_]+): /.exec(text)?.[1] ?? (state === 'TASK_STATE_FAILED' ? 'TASK_FAILED' : 'TASK_REJECTED');
        return [...this.#endText(), this.fail(text, code)];
      }
      default:
        return [];
    }
  }

  #finish(outcome: RunFinishedOutcome, result?: { taskId: string; contextId: string; state: string }): BaseEvent[] {
    this.#ended = true;
    return [{ type: EventType.RUN_FINISHED, threadId: this.ids.threadId, runId: this.ids.runId, outcome, ...(result ? { result } : {}) } as BaseEvent];
  }
}
