import { assign, emit, enqueueActions, setup } from 'xstate';
import type { GateOutcome, GateResolvedEvent } from './approval-gate.ts';
import { effect } from './effects.ts';

/**
 * One run of an agent on one message: the agent loop as a statechart. A model turn either answers or asks for tool
 * calls; the calls run (through the tool registry, in the account's lane, with the caller's authority) and the next
 * model turn reads their results, until an answer, the step limit, a failure or a cancel. Both steps are effects, so a
 * run survives a restart or a shard move (the host starts the step again with the same idempotency key, and the
 * runtime's steps write their records once per key) and a cancel aborts the model request or the tool in flight.
 *
 * A run that never called a tool ends `answered`: a bare reply, returned as a message, never shown as a task (spec §3).
 * The first tool call makes it a task (`visible`), whose answer becomes its artifact.
 *
 * running(starting → thinking ⇄ acting ⇄ awaitingApproval | awaitingInput) ──answer──▶ completed | answered (no tool called)
 *        ├──step limit, model or tool failure──▶ failed
 *        └──CANCEL──▶ canceled
 *
 * A call the autonomy policy sends to `ask` parks the run in `awaitingApproval` (TASK_STATE_INPUT_REQUIRED) on an
 * ApprovalGate; the gate's outcome (GATE_RESOLVED) takes it back to the same tool round, which runs an approved call
 * and answers a denied or expired one with a refusal the model reads.
 *
 * A call of `form_request` (the Forms built-in) parks the run in `awaitingInput` (TASK_STATE_INPUT_REQUIRED) with the
 * form as its status message; the user's values (FORM_SUBMITTED, checked against the form before they are sent here)
 * take it back to the same tool round, where they are that call's result.
 *
 * Machines are pure: every time comes with an event (the request's `at` in the input, effects' outputs and failures,
 * CANCEL's `at`), so the status timestamps are the same wherever the task is read.
 */

/** A2A wire strings of the states a task passes through here (spec §3). */
export type AgentTaskState = 'TASK_STATE_WORKING' | 'TASK_STATE_INPUT_REQUIRED' | 'TASK_STATE_COMPLETED' | 'TASK_STATE_FAILED' | 'TASK_STATE_CANCELED';

/** Who runs the task: the caller resolved at the gateway; the run never has more authority (spec §5). */
export interface TaskCaller {
  principalId: string;
  kind: string;
  role: string;
  via: string;
  /** An agent token's delegation chain (the actor presenting it first): a run's calls of other agents extend it. */
  actors?: string[];
}

export interface AgentTaskInput {
  accountId: string;
  agentId: string;
  taskId: string;
  contextId: string;
  caller: TaskCaller;
  /** Model turns at most; a run that still wants tools after them fails. */
  maxSteps: number;
  /** When the request arrived, ISO 8601 UTC. */
  at: string;
  /** A task from the start, whatever it ends on (the client did not wait for the answer, or it called a tool). */
  visible?: boolean;
  /** The tool calls of a first model turn taken before the actor existed: the run starts at their round. */
  calls?: ToolCallPlan[];
  /**
   * Nobody asked to watch the answer form (a blocking SendMessage): model turns are asked whole, not streamed. A
   * client that subscribes meanwhile gets the answer as one artifact update.
   */
  quiet?: boolean;
}

/** An A2A message of the agent (parts as on the wire). */
export interface AgentMessage {
  messageId: string;
  role: 'ROLE_AGENT';
  parts: ({ text: string } | { data: Record<string, unknown>; mediaType?: string })[];
  contextId: string;
  taskId?: string;
}

export interface ToolCallPlan {
  id: string;
  name: string;
  args: unknown;
}

export interface StepInput {
  accountId: string;
  agentId: string;
  taskId: string;
  contextId: string;
  caller: TaskCaller;
  step: number;
  /** Whether the run is a task already (text the model streams is the task's artifact). */
  visible: boolean;
  /** See AgentTaskInput.quiet. */
  quiet?: boolean;
}

export type ModelTurnOutput = { kind: 'reply'; text: string; messageId: string; at: string } | { kind: 'tools'; calls: ToolCallPlan[]; at: string };
export interface CallToolsInput extends StepInput {
  calls: ToolCallPlan[];
  /** What humans decided on this round's gated calls, by tool call id. */
  approvals?: Record<string, GateOutcome>;
  /** The values users submitted to this round's forms, by tool call id. */
  forms?: Record<string, unknown>;
}
/** A round either ran its calls, or stopped before any of them on a call that needs a human's approval. */
export interface CallToolsOutput {
  results: { id: string; name: string; isError: boolean }[];
  at: string;
  ask?: { gateId: string; toolCallId: string; message: AgentMessage };
  /** A form the round stopped at: its message is the task's status until the user submits it. */
  form?: { toolCallId: string; message: AgentMessage };
}

export interface AgentTaskContext extends AgentTaskInput {
  step: number;
  visible: boolean;
  state: AgentTaskState;
  statusAt: string;
  /** The status message (why a task failed or was canceled). */
  statusMessage: AgentMessage | null;
  /** The answer: the reply of a bare run, or the task's artifact text. */
  answer: { text: string; messageId: string } | null;
  calls: ToolCallPlan[];
  /** The gate the run waits on (in awaitingApproval). */
  gate: { gateId: string; toolCallId: string } | null;
  approvals: Record<string, GateOutcome>;
  /** The form the run waits on (in awaitingInput): the tool call that asked for it. */
  form: { toolCallId: string } | null;
  forms: Record<string, unknown>;
}

/** A user's values for the form the run waits on, already checked against it. */
export interface FormSubmittedEvent {
  type: 'FORM_SUBMITTED';
  toolCallId: string;
  values: unknown;
  at: string;
  by: string;
}

export type AgentTaskEvent = { type: 'CANCEL'; at: string; by: string } | GateResolvedEvent | FormSubmittedEvent;

export type AgentTaskEmitted =
  | { type: 'task.visible'; at: string }
  | { type: 'task.reply'; message: AgentMessage }
  | { type: 'task.artifact'; artifactId: string; text: string; /** The answer's message id in the thread (the task's history). */ messageId?: string }
  | { type: 'task.status'; state: AgentTaskState; at: string; message?: AgentMessage };

export const agentTaskAddressOf = (accountId: string, agentId: string, taskKey: string) => `agent-task/${accountId}/${agentId}:${taskKey}`;
export const answerArtifactId = (taskId: string) => `${taskId}:answer`;

const outputOf = <T>(event: unknown) => (event as { output: T }).output;
const failureOf = (event: unknown) => (event as { error?: { code?: string; message?: string; at?: number } }).error ?? {};
const agentMessage = (context: AgentTaskContext, messageId: string, text: string): AgentMessage => ({
  messageId,
  role: 'ROLE_AGENT',
  parts: [{ text }],
  contextId: context.contextId,
  ...(context.visible ? { taskId: context.taskId } : {}),
});
const stepInput = (context: AgentTaskContext): StepInput => ({
  accountId: context.accountId,
  agentId: context.agentId,
  taskId: context.taskId,
  contextId: context.contextId,
  caller: context.caller,
  step: context.step,
  visible: context.visible,
  ...(context.quiet ? { quiet: true } : {}),
});

export const agentTaskMachine = setup({
  types: { context: {} as AgentTaskContext, events: {} as AgentTaskEvent, input: {} as AgentTaskInput, emitted: {} as AgentTaskEmitted },
  actors: { modelTurn: effect<StepInput, ModelTurnOutput>(), callTools: effect<CallToolsInput, CallToolsOutput>() },
  guards: {
    replied: ({ event }) => outputOf<ModelTurnOutput>(event).kind === 'reply',
    isTask: ({ context }) => context.visible,
    stepsLeft: ({ context }) => context.step + 1 < context.maxSteps,
    asked: ({ event }) => outputOf<CallToolsOutput>(event).ask !== undefined,
    formRequested: ({ event }) => outputOf<CallToolsOutput>(event).form !== undefined,
    awaitedForm: ({ context, event }) => event.type === 'FORM_SUBMITTED' && event.toolCallId === context.form?.toolCallId,
    awaitedGate: ({ context, event }) => event.type === 'GATE_RESOLVED' && event.gateId === context.gate?.gateId,
  },
  actions: {
    takeAnswer: assign(({ event }) => {
      const out = outputOf<Extract<ModelTurnOutput, { kind: 'reply' }>>(event);
      return { answer: { text: out.text, messageId: out.messageId }, statusAt: out.at };
    }),
    complete: assign({ state: 'TASK_STATE_COMPLETED' as const }),
    announceArtifact: emit(({ context }) => ({
      type: 'task.artifact' as const,
      artifactId: answerArtifactId(context.taskId),
      text: context.answer?.text ?? '',
      messageId: context.answer?.messageId ?? '',
    })),
    announceReply: emit(({ context }) => ({ type: 'task.reply' as const, message: agentMessage(context, context.answer?.messageId ?? '', context.answer?.text ?? '') })),
    announceStatus: emit(({ context }) => ({
      type: 'task.status' as const,
      state: context.state,
      at: context.statusAt,
      ...(context.statusMessage ? { message: context.statusMessage } : {}),
    })),
    planCalls: assign(({ context, event }) => {
      const out = outputOf<Extract<ModelTurnOutput, { kind: 'tools' }>>(event);
      return { calls: out.calls, statusAt: context.visible ? context.statusAt : out.at };
    }),
    /** The first tool call makes the run a task: from here on it is listed, and its answer is an artifact. */
    becomeTask: enqueueActions(({ context, event, enqueue }) => {
      if (context.visible) return;
      enqueue.assign({ visible: true });
      enqueue.emit({ type: 'task.visible', at: outputOf<ModelTurnOutput>(event).at });
    }),
    nextStep: assign(({ context }) => ({ step: context.step + 1, calls: [], approvals: {}, forms: {} })),
    awaitApproval: assign(({ event }) => {
      const out = outputOf<CallToolsOutput>(event);
      return { state: 'TASK_STATE_INPUT_REQUIRED' as const, statusAt: out.at, statusMessage: out.ask!.message, gate: { gateId: out.ask!.gateId, toolCallId: out.ask!.toolCallId } };
    }),
    awaitInput: assign(({ event }) => {
      const out = outputOf<CallToolsOutput>(event);
      return { state: 'TASK_STATE_INPUT_REQUIRED' as const, statusAt: out.at, statusMessage: out.form!.message, form: { toolCallId: out.form!.toolCallId } };
    }),
    submitted: assign(({ context, event }) => {
      const e = event as FormSubmittedEvent;
      return { state: 'TASK_STATE_WORKING' as const, statusAt: e.at, statusMessage: null, form: null, forms: { ...context.forms, [e.toolCallId]: e.values } };
    }),
    resume: assign(({ context, event }) => {
      const e = event as GateResolvedEvent;
      return { state: 'TASK_STATE_WORKING' as const, statusAt: e.at, statusMessage: null, gate: null, approvals: { ...context.approvals, [e.toolCallId]: e.outcome } };
    }),
    stepLimit: assign(({ context, event }) => ({
      state: 'TASK_STATE_FAILED' as const,
      statusAt: outputOf<ModelTurnOutput>(event).at,
      statusMessage: agentMessage({ ...context, visible: true }, `${context.taskId}:status`, `The agent stopped after ${context.maxSteps} steps without an answer (its step limit).`),
    })),
    fail: assign(({ context, event }) => {
      const err = failureOf(event);
      return {
        state: 'TASK_STATE_FAILED' as const,
        statusAt: typeof err.at === 'number' ? new Date(err.at).toISOString() : context.statusAt,
        statusMessage: agentMessage({ ...context, visible: true }, `${context.taskId}:status`, `${err.code ?? 'PLT_INTERNAL'}: ${err.message ?? 'the run failed'}`),
      };
    }),
    cancel: assign(({ context, event }) => ({
      state: 'TASK_STATE_CANCELED' as const,
      statusAt: event.at,
      statusMessage: agentMessage({ ...context, visible: true }, `${context.taskId}:status`, `Canceled by ${event.by}.`),
    })),
    /** A failure or a cancel before any tool call still ends as a task: the client holds its id and asks about it. */
    showTask: assign({ visible: true }),
  },
}).createMachine({
  id: 'AgentTask',
  context: ({ input }) => ({ ...input, step: 0, visible: input.visible === true, state: 'TASK_STATE_WORKING', statusAt: input.at, statusMessage: null, answer: null, calls: input.calls ?? [], gate: null, approvals: {}, form: null, forms: {} }),
  initial: 'running',
  states: {
    running: {
      initial: 'starting',
      on: { CANCEL: { target: 'canceled', actions: ['cancel', 'showTask', 'announceStatus'] } },
      states: {
        starting: { always: [{ guard: ({ context }) => context.calls.length > 0, target: 'acting' }, { target: 'thinking' }] },
        thinking: {
          invoke: {
            id: 'modelTurn',
            src: 'modelTurn',
            input: ({ context }) => stepInput(context),
            onDone: [
              { guard: 'replied', target: '#AgentTask.decided', actions: 'takeAnswer' },
              { guard: 'stepsLeft', target: 'acting', actions: ['planCalls', 'becomeTask'] },
              { target: '#AgentTask.failed', actions: ['stepLimit', 'showTask', 'announceStatus'] },
            ],
            onError: { target: '#AgentTask.failed', actions: ['fail', 'showTask', 'announceStatus'] },
          },
        },
        acting: {
          invoke: {
            id: 'callTools',
            src: 'callTools',
            input: ({ context }) => ({ ...stepInput(context), calls: context.calls, approvals: context.approvals, forms: context.forms }),
            onDone: [
              { guard: 'asked', target: 'awaitingApproval', actions: ['awaitApproval', 'announceStatus'] },
              { guard: 'formRequested', target: 'awaitingInput', actions: ['awaitInput', 'announceStatus'] },
              { target: 'thinking', actions: 'nextStep' },
            ],
            onError: { target: '#AgentTask.failed', actions: ['fail', 'showTask', 'announceStatus'] },
          },
        },
        awaitingApproval: {
          on: { GATE_RESOLVED: { guard: 'awaitedGate', target: 'acting', actions: ['resume', 'announceStatus'] } },
        },
        awaitingInput: {
          on: { FORM_SUBMITTED: { guard: 'awaitedForm', target: 'acting', actions: ['submitted', 'announceStatus'] } },
        },
      },
    },
    decided: {
      always: [
        { guard: 'isTask', target: 'completed', actions: ['complete', 'announceArtifact', 'announceStatus'] },
        { target: 'answered', actions: 'announceReply' },
      ],
    },
    answered: { type: 'final' },
    completed: { type: 'final' },
    failed: { type: 'final' },
    canceled: { type: 'final' },
  },
});
