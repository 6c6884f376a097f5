import type { ModelTurnOutput, StepInput, TaskCaller, ToolCallPlan } from '../../actors/index.ts';
import type { Store, ThreadRecordInput } from '../../store/index.ts';
import type { ActorSystem } from '../core/actor-host/index.ts';
import { instantOf } from '../core/clock/index.ts';
import { asPlatformError, isPlatformError, PlatformError } from '../core/errors/index.ts';
import { TERMINAL, type A2aArtifact, type A2aCaller, type A2aListParams, type A2aMessage, type A2aSendParams, type A2aStreamResponse, type A2aTask } from './a2a-shapes.ts';
import { runEvents, runFrames, type Follow, type RunStreamOptions } from './run-stream.ts';
import { isFrame, type RunEvent } from './run-tools.ts';
import { addressOf, launchRun, messageReused, prepareRun, threadScopeOf, type PreparedRun, type RunStartDeps, type StartedRun } from './run-start.ts';
import { DEFAULT_HISTORY, historyOf, pageToken, readPageToken, taskView } from './task-views.ts';
import { gateDecisionOf, rejectionMessage, submitDecision, type GateDecisionPart } from './gate-resume.ts';
import { formAnswerOf, submitForm } from './form-resume.ts';
import { withoutForm } from './form-messages.ts';
import type { ApprovalGates } from '../approvals/index.ts';

export interface AgentGatewayDeps {
  store: Pick<Store, 'agentTasks' | 'agentThreads'>;
  attachments: RunStartDeps['attachments'];
  actors: Pick<ActorSystem, 'create' | 'ask'>;
  follow: Follow;
  /** A run's first model turn, taken in the request (in the account's lane): see agentSteps().firstTurn. */
  firstTurn: (input: StepInput, signal: AbortSignal, user: PreparedRun['user']) => Promise<{ output: ModelTurnOutput; written: boolean }>;
  /** Writes the user's message of a first turn that failed. */
  recordMessage: (input: StepInput, record: ThreadRecordInput) => Promise<boolean>;
  now: () => number;
  maxSteps: number;
  gates: Pick<ApprovalGates, 'get' | 'decide'>;
  /**
   * A task written without an actor (a run whose first turn failed) after its inline push config was stored: the
   * push delivery of its state, since no actor's turn will announce it.
   */
  taskWritten?: (ref: { accountId: string; agentId: string; taskId: string }, task: A2aTask) => void;
}

const DEFAULT_PAGE = 50;
/** ListTasks' `statusTimestampAfter`: its pattern passes dates no calendar has (the 30th of February, month 13). */
function sinceOf(text: string): string {
  const at = instantOf(text);
  if (at === null) throw new PlatformError('A2A_INVALID_PARAMS', `statusTimestampAfter: ${JSON.stringify(text.slice(0, 64))} is not a time between years 1 and 9999`);
  return at;
}
const callerOf = (c: A2aCaller): TaskCaller => ({ principalId: c.principalId, kind: c.principalKind, role: c.role, via: c.via });

/** What a send may ask besides its params: work to do once the task id is taken (an inline push config). */
export interface SendHooks {
  onTask?: (taskId: string) => Promise<unknown>;
}

/**
 * The agent runtime as the A2A gateway calls it: the task methods of A2A 1.0 over AgentTask actors and their rows,
 * every one scoped by the caller's account, agent and principal (a task of another caller looks exactly like one that
 * does not exist). Blocking and streaming sends follow the run's actor from this node, wherever it runs.
 */
export function createAgentGateway(deps: AgentGatewayDeps) {
  const scopeOf = (c: A2aCaller) => ({ accountId: c.accountId, agentId: c.agentId });
  const frames = (run: { address: string; taskId: string; contextId: string; scope: { accountId: string; agentId: string }; resumedGate?: string }, opts?: Pick<RunStreamOptions, 'answered'>) =>
    runFrames({ follow: deps.follow, store: deps.store }, run.address, run.scope, run, opts);

  /**
   * A blocking send's answer: the run followed to its end (or an interrupt). A completed run is answered from its
   * frames, since the turn that sent them committed the task's row and its answer's message together; the client's
   * message is the one this request wrote. Any other end is read back from the row.
   */
  async function awaitRun(c: A2aCaller, run: PreparedRun, started: StartedRun, historyLength: number | undefined): Promise<A2aTask> {
    let status: A2aTask['status'] | undefined;
    let artifact: A2aArtifact | undefined;
    let answerId: string | undefined;
    for await (const frame of frames(started, { answered: (id) => (answerId = id) })) {
      if ('message' in frame || c.signal.aborted) break;
      if ('artifactUpdate' in frame && frame.artifactUpdate.lastChunk) artifact = frame.artifactUpdate.artifact;
      if ('statusUpdate' in frame) status = frame.statusUpdate.status;
    }
    if (status?.state !== 'TASK_STATE_COMPLETED' || !artifact || answerId === undefined || c.signal.aborted) return snapshot(c, run.taskId, historyLength);
    const n = Math.min(historyLength ?? DEFAULT_HISTORY, 1000);
    const answer: A2aMessage = { messageId: answerId, role: 'ROLE_AGENT', parts: artifact.parts, contextId: run.contextId, taskId: run.taskId };
    const history = n === 0 ? undefined : [run.user.record.body as A2aMessage, answer].slice(-n);
    return { id: run.taskId, contextId: run.contextId, status, artifacts: [artifact], ...(history ? { history } : {}) };
  }

  /**
   * A message carrying a gate decision (spec §3, §4.3): for the caller's own task, which must be in that context.
   * Taken, the run resumes and is followed as a send's would be; refused, the answer says why (the task still waits).
   */
  async function decide(params: A2aSendParams, c: A2aCaller, d: GateDecisionPart) {
    const row = await ownTask(c, params.message.taskId!);
    if (row.contextId !== params.message.contextId) throw new PlatformError('A2A_INVALID_PARAMS', `message.contextId: task ${row.id} is not in context ${params.message.contextId}`);
    const rejected = await submitDecision(deps, c, row, d);
    const run = { address: addressOf(scopeOf(c), row.id), taskId: row.id, contextId: row.contextId, scope: scopeOf(c), resumedGate: d.gateId };
    return { rejected: rejected ? rejectionMessage(params, d.gateId, rejected) : null, run };
  }

  /**
   * A message that resumes a task waiting on a human: a gate decision, or a form's values. Taken, the run resumes
   * and is followed as a send's would be; refused, the agent's answer says why (the task still waits). Null: an
   * ordinary message.
   */
  async function resumption(params: A2aSendParams, c: A2aCaller) {
    const decision = gateDecisionOf(params.message);
    if (decision) return decide(params, c, decision);
    const m = params.message;
    const found = m.taskId ? await deps.store.agentTasks.get(scopeOf(c), m.taskId) : null;
    // A task id nobody holds is a new task of the client's choosing (spec §4.3), whatever its parts say.
    if (m.taskId && !found) return null;
    const row = found && found.visible && found.ownerId === c.principalId ? found : null;
    const answer = formAnswerOf(m, row);
    if (!answer || !row) return null;
    const run = { address: addressOf(scopeOf(c), row.id), taskId: row.id, contextId: row.contextId, scope: scopeOf(c) };
    return { rejected: await submitForm(deps, c, params, run.address, answer), run };
  }

  /** The caller's visible task, or A2A_TASK_NOT_FOUND. */
  async function ownTask(c: A2aCaller, id: string) {
    const row = await deps.store.agentTasks.get(scopeOf(c), id);
    if (!row || !row.visible || row.ownerId !== c.principalId) throw new PlatformError('A2A_TASK_NOT_FOUND', `task ${id} not found`);
    return row;
  }

  /**
   * The first model turn, in the request: a bare reply is the whole run (a message, no task: a client's task id stays
   * taken, its row showing the reply); tool calls go on in an AgentTask.
   */
  async function firstTurn(run: PreparedRun, hooks: SendHooks): Promise<{ message: A2aMessage } | { task: A2aTask } | { calls: ToolCallPlan[]; at: string }> {
    const c = run.caller;
    const input: StepInput = { accountId: c.accountId, agentId: c.agentId, taskId: run.taskId, contextId: run.contextId, caller: callerOf(c), step: 0, visible: false };
    let out: ModelTurnOutput;
    try {
      const turn = await deps.firstTurn(input, c.signal, run.user);
      if (!turn.written) throw await messageReused(deps, run);
      out = turn.output;
    } catch (err) {
      if (c.signal.aborted || isPlatformError(err, 'A2A_INVALID_PARAMS')) throw err;
      if (!(await deps.recordMessage(input, run.user.record))) throw await messageReused(deps, run);
      return { task: await failedTask(run, asPlatformError(err), hooks) };
    }
    if (out.kind === 'tools') return { calls: out.calls, at: out.at };
    const message: A2aMessage = { messageId: out.messageId, role: 'ROLE_AGENT', parts: [{ text: out.text }], contextId: run.contextId };
    if (run.reserved) await deps.store.agentTasks.update(run.scope, run.taskId, { visible: false, state: 'TASK_STATE_COMPLETED', statusMessage: message, statusAt: out.at, artifacts: [] });
    return { message };
  }

  /**
   * A run whose first turn failed (the model unreachable, too slow) is a failed task, as a later failure would be: the
   * client learns why, and has an id to look it up by. Nothing runs any more, so no actor holds it: a push config
   * sent with the message is stored now, and told of the failure from here.
   */
  async function failedTask(run: PreparedRun, err: PlatformError, hooks: SendHooks): Promise<A2aTask> {
    const at = new Date(deps.now()).toISOString();
    const statusMessage: A2aMessage = { messageId: `${run.taskId}:status`, role: 'ROLE_AGENT', parts: [{ text: `${err.code}: ${err.message}` }], contextId: run.contextId, taskId: run.taskId };
    // One statement whether or not the client's id was reserved.
    await deps.store.agentTasks.upsert(run.scope, run.taskId, { contextId: run.contextId, ownerId: run.caller.principalId, visible: true, state: 'TASK_STATE_FAILED', statusMessage, statusAt: at, artifacts: [] });
    const task = await snapshot(run.caller, run.taskId, undefined);
    if (hooks.onTask) {
      await hooks.onTask(run.taskId);
      deps.taskWritten?.({ ...run.scope, taskId: run.taskId }, task);
    }
    return task;
  }

  async function* stream(params: A2aSendParams, c: A2aCaller, hooks: SendHooks, withTools: boolean): AsyncGenerator<RunEvent> {
    const resumed = await resumption(params, c);
    if (resumed) {
      const { rejected, run } = resumed;
      if (rejected) {
        // One update, not final: the task still waits on its gate or form.
        yield { statusUpdate: { taskId: run.taskId, contextId: run.contextId, status: { state: 'TASK_STATE_INPUT_REQUIRED', timestamp: new Date(deps.now()).toISOString(), message: rejected } } };
      } else if (!withTools) yield* frames(run);
      else yield* runEvents({ follow: deps.follow, store: deps.store }, run.address, run.scope, run, { tools: { thread: threadScopeOf(c) } });
      return;
    }
    const run = await prepareRun(deps, params, c, { write: false });
    const first = await firstTurn(run, hooks);
    if ('message' in first || 'task' in first) {
      yield first;
      return;
    }
    const started = await launchRun(deps, run, { visible: true, calls: first.calls, at: first.at, ...hooks });
    if (!withTools) yield* frames(started);
    else yield* runEvents({ follow: deps.follow, store: deps.store }, started.address, started.scope, started, { tools: { thread: run.thread, calls: first.calls } });
  }

  async function snapshot(c: A2aCaller, id: string, historyLength: number | undefined): Promise<A2aTask> {
    const row = await ownTask(c, id);
    return taskView(row, { artifacts: true, history: await historyOf(deps.store, threadScopeOf(c), row, historyLength) });
  }

  /** A task exactly as its owner's GetTask (default history) shows it, or null when there is no task to show. */
  async function ownerSnapshot(ref: { accountId: string; agentId: string; taskId: string }): Promise<A2aTask | null> {
    const scope = { accountId: ref.accountId, agentId: ref.agentId };
    const row = await deps.store.agentTasks.get(scope, ref.taskId);
    if (!row || !row.visible) return null;
    const t = taskView(row, { artifacts: true, history: await historyOf(deps.store, { ...scope, ownerId: row.ownerId }, row, undefined) });
    // A push request negotiated no extension: a form reaches it as its text request.
    return { ...t, status: { ...t.status, ...(t.status.message ? { message: withoutForm(t.status.message) } : {}) }, ...(t.history ? { history: t.history.map(withoutForm) } : {}) };
  }

  return {
    /** Waits for the run's end (or an interrupt) unless `returnImmediately`; a bare reply answers as a message. */
    async sendMessage(params: A2aSendParams, c: A2aCaller, hooks: SendHooks = {}): Promise<{ task: A2aTask } | { message: A2aMessage }> {
      const resumed = await resumption(params, c);
      if (resumed) {
        const { rejected, run } = resumed;
        if (rejected) return { message: rejected };
        for await (const _ of frames(run)) if (c.signal.aborted) break;
        return { task: await snapshot(c, run.taskId, params.configuration?.historyLength) };
      }
      const immediate = params.configuration?.returnImmediately === true;
      const run = await prepareRun(deps, params, c, { write: immediate });
      if (immediate) {
        await launchRun(deps, run, { visible: true, ...hooks });
        return { task: await snapshot(c, run.taskId, params.configuration?.historyLength) };
      }
      const first = await firstTurn(run, hooks);
      if ('message' in first || 'task' in first) return first;
      const started = await launchRun(deps, run, { visible: true, quiet: true, calls: first.calls, at: first.at, ...hooks });
      return { task: await awaitRun(c, run, started, params.configuration?.historyLength) };
    },

    async *sendStreamingMessage(params: A2aSendParams, c: A2aCaller, hooks: SendHooks = {}): AsyncGenerator<A2aStreamResponse> {
      for await (const e of stream(params, c, hooks, false)) if (isFrame(e)) yield e;
    },

    /** The stream of sendStreamingMessage with the run's tool calls and their results (the AG-UI route shows them). */
    streamRun: (params: A2aSendParams, c: A2aCaller, hooks: SendHooks = {}): AsyncGenerator<RunEvent> => stream(params, c, hooks, true),

    /**
     * Whether a task is one the caller may attach things to (push configs): its own, and a task (or a run still
     * working, which may become one); a bare reply's id is not a task.
     */
    async taskVisible(accountId: string, agentId: string, taskId: string, principalId: string): Promise<boolean> {
      const row = await deps.store.agentTasks.get({ accountId, agentId }, taskId);
      return row !== null && row.ownerId === principalId && (row.visible || row.state === 'TASK_STATE_WORKING');
    },

    getTask: (params: { id: string; historyLength?: number }, c: A2aCaller) => snapshot(c, params.id, params.historyLength),

    /** What a push notification carries: the task as its owner's GetTask shows it (null: no visible task). */
    ownerSnapshot,

    async listTasks(params: A2aListParams, c: A2aCaller) {
      const limit = params.pageSize ?? DEFAULT_PAGE;
      const { rows, total } = await deps.store.agentTasks.list(scopeOf(c), {
        ownerId: c.principalId,
        limit: limit + 1,
        ...(params.contextId !== undefined ? { contextId: params.contextId } : {}),
        ...(params.status !== undefined ? { state: params.status } : {}),
        ...(params.statusTimestampAfter !== undefined ? { since: sinceOf(params.statusTimestampAfter) } : {}),
        ...(params.pageToken ? { after: readPageToken(params.pageToken) } : {}),
      });
      const page = rows.slice(0, limit);
      const thread = threadScopeOf(c);
      const tasks = await Promise.all(
        page.map(async (row) => taskView(row, { artifacts: params.includeArtifacts === true, history: await historyOf(deps.store, thread, row, params.historyLength ?? 0) })),
      );
      return { tasks, nextPageToken: rows.length > limit ? pageToken(page[page.length - 1]!) : '', pageSize: limit, totalSize: total };
    },

    /** A canceled task answers as it is; any other ended task cannot be canceled (-32002). */
    async cancelTask(params: { id: string }, c: A2aCaller): Promise<A2aTask> {
      const row = await ownTask(c, params.id);
      if (row.state === 'TASK_STATE_CANCELED') return snapshot(c, params.id, undefined);
      if (TERMINAL.has(row.state)) throw new PlatformError('A2A_TASK_NOT_CANCELABLE', `task ${params.id} has ended (${row.state}) and cannot be canceled`);
      try {
        await deps.actors.ask(addressOf(scopeOf(c), params.id), { type: 'CANCEL', at: new Date(deps.now()).toISOString(), by: c.principalId });
      } catch (err) {
        // The run ended between the read and the cancel: its actor is gone; the row tells how it ended.
        if (!isPlatformError(err, 'PLT_ACTOR_NOT_FOUND')) throw err;
      }
      const after = await ownTask(c, params.id);
      if (after.state !== 'TASK_STATE_CANCELED') throw new PlatformError('A2A_TASK_NOT_CANCELABLE', `task ${params.id} ended (${after.state}) before it could be canceled`);
      return snapshot(c, params.id, undefined);
    },

    /** The task as it is now, then its updates until it ends; an ended task has nothing to follow (-32004). */
    async *subscribeToTask(params: { id: string }, c: A2aCaller): AsyncGenerator<A2aStreamResponse> {
      const row = await ownTask(c, params.id);
      if (TERMINAL.has(row.state)) throw new PlatformError('A2A_UNSUPPORTED_OPERATION', `task ${params.id} has ended (${row.state}): read it with GetTask`);
      yield* frames({ address: addressOf(scopeOf(c), row.id), taskId: row.id, contextId: row.contextId, scope: scopeOf(c) });
    },
  };
}

export type AgentGateway = ReturnType<typeof createAgentGateway>;
