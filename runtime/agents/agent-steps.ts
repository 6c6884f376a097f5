import type { CallToolsInput, CallToolsOutput, ModelTurnOutput, StepInput, TaskCaller, ToolCallPlan } from '../../actors/index.ts';
import type { AgentRecord, Store, ThreadRecordInput, ThreadScope } from '../../store/index.ts';
import type { EffectContext } from '../core/actor-host/index.ts';
import { isPlatformError, PlatformError } from '../core/errors/index.ts';
import { ttlCache } from '../core/cache/index.ts';
import type { Caller } from '../identity/index.ts';
import { generateStreamed, generateWhole, type ModelRegistry, type ModelSaid, type ModelTurnRequest } from '../models/index.ts';
import type { ApprovalGates } from '../approvals/index.ts';
import { workspaceAnchor, type AutonomyPolicy, type ToolEntry, type ToolRegistry } from '../tools/index.ts';
import { agentTaskAddressOf } from '../../actors/index.ts';
import { taskKey } from './task-views.ts';
import { runHistories } from './run-histories.ts';
import { HISTORY_WINDOW, modelMessages, type ToolCallsBody, type ToolResultsBody } from './thread-history.ts';
import { formMessage } from './form-messages.ts';
import type { FormSpec } from '../builtins/index.ts';

/** What a tool result may put into the model's context; longer output is cut (the model is told so). */
const MAX_TOOL_OUTPUT = 64 * 1024;

export interface AgentStepDeps {
  store: Pick<Store, 'agents' | 'agentThreads'>;
  models: Pick<ModelRegistry, 'resolve'>;
  tools: Pick<ToolRegistry, 'visible'>;
  policy: AutonomyPolicy;
  /** Where a call the policy sends to `ask` waits for a human. */
  gates: Pick<ApprovalGates, 'open'>;
  stepTimeoutMs: number;
  now: () => number;
}

const scopeOf = (i: StepInput): ThreadScope => ({ accountId: i.accountId, agentId: i.agentId, ownerId: i.caller.principalId });
export const callerOf = (i: { accountId: string; caller: TaskCaller }): Caller => ({
  accountId: i.accountId,
  principalId: i.caller.principalId,
  kind: i.caller.kind as Caller['kind'],
  role: i.caller.role as Caller['role'],
  via: i.caller.via as Caller['via'],
  ...(i.caller.actors?.length ? { actors: i.caller.actors } : {}),
});
/** Record ids are the task's and the step's: a step run again (restart, shard move) finds what it wrote before. */
const turnRecordId = (i: StepInput) => `${i.taskId}/step-${i.step}`;
const resultsRecordId = (i: StepInput) => `${i.taskId}/step-${i.step}/results`;
/** The answer's A2A message id. */
export const replyMessageId = (i: StepInput) => `${i.taskId}/reply-${i.step}`;

/**
 * The step's own deadline joined with the run's cancellation; `done` when the step ends. (A controller and a timer:
 * AbortSignal.timeout with AbortSignal.any costs several times more, and every step of every run takes one.)
 */
function stepSignal(ctx: Pick<EffectContext, 'signal'>, ms: number) {
  const controller = new AbortController();
  let late = false;
  const onAbort = () => controller.abort(ctx.signal.reason);
  if (ctx.signal.aborted) onAbort();
  else ctx.signal.addEventListener('abort', onAbort, { once: true });
  const timer = setTimeout(() => {
    late = true;
    controller.abort(new DOMException(`the step took more than ${ms} ms`, 'TimeoutError'));
  }, ms);
  return {
    signal: controller.signal,
    timedOut: () => late && !ctx.signal.aborted,
    done() {
      clearTimeout(timer);
      ctx.signal.removeEventListener('abort', onAbort);
    },
  };
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * The two effects of an AgentTask: a model turn and a round of tool calls. Each reads the thread, does its work
 * once per step (a record keyed by task and step says it is done; an effect started again looks for it first), and
 * writes its record to the thread.
 */
export function agentSteps(deps: AgentStepDeps) {
  // Agents change rarely (an operator's command) and a turn reads one for every step: kept per node for a second.
  const agentCache = ttlCache<string, Promise<AgentRecord | null>>(1000, deps.now);
  const agents = {
    get(accountId: string, agentId: string) {
      const hit = agentCache.get(agentId);
      if (hit) return hit;
      const loading = deps.store.agents.get(accountId, agentId);
      loading.catch(() => agentCache.delete(agentId));
      return agentCache.set(agentId, loading);
    },
  };
  const histories = runHistories(deps.now);
  const visibleTools = (i: StepInput) => deps.tools.visible({ kind: 'agent', id: i.agentId, accountId: i.accountId }, callerOf(i));

  /** The effect: a step run again finds the record it wrote before and answers from it. */
  async function modelTurn(input: StepInput, ctx: EffectContext): Promise<ModelTurnOutput> {
    // A first attempt has nothing to find: each step is entered once, so only a restarted effect may have written.
    const [done] = ctx.attempt > 1 ? await deps.store.agentThreads.find(scopeOf(input), input.contextId, [turnRecordId(input), replyMessageId(input)]) : [];
    if (done) return turnOutput(done.kind === 'tool_calls' ? { calls: (done.body as ToolCallsBody).calls } : { text: replyText(done.body) }, input, deps.now());
    // A step started again reads the store: what this node held may miss what another attempt wrote.
    if (ctx.attempt > 1) histories.end(input.taskId);
    const { output, record } = await turn(input, ctx, null);
    // The answer ends the run: the turn that takes it writes it to the thread, with the task's end (agentTaskProjection).
    if (output.kind === 'reply') histories.end(input.taskId);
    else {
      await deps.store.agentThreads.appendStep(scopeOf(input), input.contextId, record);
      histories.append(input.taskId, record);
    }
    return output;
  }

  /**
   * One model turn: what the model answered, and the record the thread keeps of it. `pending`: the user's message
   * when it is not in the store yet (a first turn writes it with the answer, in one statement); a thread that is new
   * has nothing else to read.
   */
  async function turn(input: StepInput, ctx: Pick<EffectContext, 'signal' | 'progress'>, pending: { record: ThreadRecordInput; newThread: boolean } | null) {
    const scope = scopeOf(input);
    const agent = await agents.get(input.accountId, input.agentId);
    if (!agent) throw new PlatformError('A2A_UNKNOWN_AGENT', 'the agent of this task no longer exists');
    const tools = await visibleTools(input);
    const kept = pending ? undefined : histories.get(input.taskId);
    const stored = kept ?? (pending?.newThread ? [] : await deps.store.agentThreads.tail(scope, input.contextId, HISTORY_WINDOW));
    const history = pending ? [...stored, { ...pending.record, seq: 0, createdAt: '' }] : stored;
    const { signal, timedOut, done } = stepSignal(ctx, deps.stepTimeoutMs);
    let said: ModelSaid;
    try {
      const model = deps.models.resolve(agent.model);
      const request: ModelTurnRequest = {
        ...systemOf(agent.instructions, tools),
        messages: modelMessages(history),
        tools: tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema })),
        signal,
      };
      // Chunks matter only to a task's streams: a turn before the run is a task (a bare reply is sent whole), or of a
      // run nobody watches form, is asked whole, one JSON answer with no stream to parse.
      said = input.visible && !input.quiet ? await generateStreamed(model, request, (text) => ctx.progress({ text })) : await generateWhole(model, request);
    } catch (err) {
      if (timedOut()) throw new PlatformError('AGENT_STEP_TIMEOUT', `the model did not answer within ${deps.stepTimeoutMs / 1000} s`);
      if (ctx.signal.aborted || isPlatformError(err)) throw err;
      throw new PlatformError('MODEL_FAILED', `the model ${agent.model} failed: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    } finally {
      done();
    }
    const { text, calls } = said;
    if (calls.length) {
      const body: ToolCallsBody = { calls, ...(text ? { text } : {}) };
      return { history, output: turnOutput({ calls }, input, deps.now()), record: { messageId: turnRecordId(input), taskId: input.taskId, kind: 'tool_calls' as const, body } };
    }
    const message = { messageId: replyMessageId(input), role: 'ROLE_AGENT', parts: [{ text }], contextId: input.contextId, ...(input.visible ? { taskId: input.taskId } : {}) };
    return { history, output: turnOutput({ text }, input, deps.now()), record: { messageId: message.messageId, taskId: input.taskId, kind: 'agent' as const, body: message } };
  }

  /**
   * A run's first model turn, taken in the request itself before any actor exists: most messages end on a bare
   * reply, which needs no task (spec §3), so it costs no actor, snapshot or event, and the user's message and the
   * answer are written in one statement (one commit). A first turn that asks for tools hands its calls to a new
   * AgentTask (which starts at the tool round). False `written`: the thread held that message id already.
   */
  async function firstTurn(input: StepInput, signal: AbortSignal, user: { record: ThreadRecordInput; newThread: boolean }) {
    const { output, record, history } = await turn(input, { signal, progress: () => {} }, user);
    // A reply is the run's last write and must be on disk when the client reads it; tool calls go on in an AgentTask
    // whose creation commits (synchronously) right after.
    const written = await deps.store.agentThreads.start(scopeOf(input), input.contextId, [user.record, record], { durable: output.kind === 'reply' });
    if (written && output.kind === 'tools') histories.start(input.taskId, history, record);
    return { output, written };
  }

  async function callTools(input: CallToolsInput, ctx: EffectContext): Promise<CallToolsOutput> {
    const scope = scopeOf(input);
    const done = ctx.attempt > 1 ? await deps.store.agentThreads.get(scope, input.contextId, resultsRecordId(input)) : null;
    if (done) return resultsOutput((done.body as ToolResultsBody).results, deps.now());
    const tools = new Map((await visibleTools(input)).map((t) => [t.name, t]));
    const caller = callerOf(input);
    // Every call is decided before any runs: a call that needs a human stops the round before anything ran, and the
    // round runs again, whole, once the human decided.
    const plan: { call: ToolCallPlan; entry?: ToolEntry; refused?: string; answer?: unknown }[] = [];
    const thread = { contextId: input.contextId, taskId: input.taskId };
    for (const call of input.calls) {
      ctx.progress({ step: input.step, toolCall: call });
      const entry = tools.get(call.name);
      if (!entry) {
        plan.push({ call, refused: `There is no tool named ${call.name} bound to this agent.` });
        continue;
      }
      // A form is the user's to answer: the round stops at it (nothing ran yet) until the values arrive, which are then
      // the call's result. The built-in's own run only checks the form the model asked for.
      if (entry.origin.kind === 'builtin' && entry.origin.family === 'forms') {
        if (input.forms && Object.hasOwn(input.forms, call.id)) {
          plan.push({ call, entry, answer: input.forms[call.id] });
          continue;
        }
        const checked = await entry.invoke(caller, call.args ?? {}, { anchor: null, signal: ctx.signal, thread });
        if (checked.isError) {
          plan.push({ call, entry, refused: checked.message });
          continue;
        }
        const spec = (checked.value as { form: FormSpec }).form;
        return { results: [], at: iso(deps.now()), form: { toolCallId: call.id, message: formMessage(spec, call.id, thread) } };
      }
      const human = input.approvals?.[call.id];
      if (human) {
        plan.push(human === 'approved' ? { call, entry } : { call, entry, refused: human === 'denied' ? 'A person denied this call.' : 'The approval this call needed expired before anyone decided.' });
        continue;
      }
      const decision = await deps.policy.evaluate(caller, entry, call.args, { kind: 'agent', id: input.agentId, accountId: input.accountId });
      if (decision.decision === 'ask') {
        const gate = await deps.gates.open({
          accountId: input.accountId,
          agentId: input.agentId,
          taskId: input.taskId,
          contextId: input.contextId,
          taskAddress: agentTaskAddressOf(input.accountId, input.agentId, taskKey(input.taskId)),
          ownerId: input.caller.principalId,
          step: input.step,
          tool: call.name,
          toolCallId: call.id,
          arguments: call.args ?? {},
          reason: decision.reason,
        });
        return { results: [], at: iso(deps.now()), ask: { gateId: gate.gateId, toolCallId: call.id, message: gate.message } };
      }
      plan.push(decision.decision === 'allow' ? { call, entry } : { call, entry, refused: `The call was refused: ${decision.reason}.` });
    }
    const step = stepSignal(ctx, deps.stepTimeoutMs);
    const { signal, timedOut } = step;
    const results: ToolResultsBody['results'] = [];
    // Each call and its result go to the task's streams as progress (AG-UI shows them; A2A frames skip them).
    const settle = (r: ToolResultsBody['results'][number]) => {
      results.push(r);
      ctx.progress({ step: input.step, toolResult: r });
    };
    try {
    for (const { call, entry, refused, answer } of plan) {
      if (refused !== undefined || !entry) {
        settle({ id: call.id, name: call.name, isError: true, output: refused ?? '' });
        continue;
      }
      if (answer !== undefined) {
        settle({ id: call.id, name: call.name, isError: false, output: cut(JSON.stringify({ submitted: answer })) });
        continue;
      }
      const r = await entry.invoke(caller, call.args ?? {}, { anchor: workspaceAnchor('agent', input.agentId, caller.principalId), signal, thread });
      if (timedOut()) throw new PlatformError('AGENT_STEP_TIMEOUT', `the tool ${call.name} did not finish within ${deps.stepTimeoutMs / 1000} s`);
      if (ctx.signal.aborted) throw new PlatformError('PLT_ACTOR_HOST_STOPPED', 'the run was canceled');
      settle({ id: call.id, name: call.name, isError: r.isError, output: cut(r.isError ? r.message : typeof r.value === 'string' ? r.value : JSON.stringify(r.value ?? null)) });
    }
    } finally {
      step.done();
    }
    const record: ThreadRecordInput = { messageId: resultsRecordId(input), taskId: input.taskId, kind: 'tool_results', body: { results } satisfies ToolResultsBody };
    await deps.store.agentThreads.appendStep(scope, input.contextId, record);
    if (ctx.attempt === 1) histories.append(input.taskId, record);
    else histories.end(input.taskId);
    return resultsOutput(results, deps.now());
  }

  return {
    modelTurn,
    callTools,
    firstTurn,
    /** Writes a first turn's user message alone (the turn failed): false when the thread held its id already. */
    recordMessage: (input: StepInput, record: ThreadRecordInput) => deps.store.agentThreads.start(scopeOf(input), input.contextId, [record]),
  };
}

/** The agent's own instructions, then what its bound tools add (the skills it may read), as the system prompt. */
function systemOf(instructions: string, tools: readonly ToolEntry[]): { system?: string } {
  const parts = [instructions, ...tools.map((t) => t.instructions ?? '')].filter((x) => x.length > 0);
  return parts.length ? { system: parts.join('\n\n') } : {};
}

const replyText = (body: unknown) => ((body as { parts?: { text?: string }[] }).parts ?? []).map((p) => p.text ?? '').join('');
const cut = (s: string) => (s.length > MAX_TOOL_OUTPUT ? `${s.slice(0, MAX_TOOL_OUTPUT)}\n[output cut at ${MAX_TOOL_OUTPUT} characters]` : s);

function turnOutput(r: { calls: ToolCallsBody['calls'] } | { text: string }, input: StepInput, now: number): ModelTurnOutput {
  return 'calls' in r ? { kind: 'tools', calls: r.calls, at: iso(now) } : { kind: 'reply', text: r.text, messageId: replyMessageId(input), at: iso(now) };
}
const resultsOutput = (results: ToolResultsBody['results'], now: number): CallToolsOutput => ({ results: results.map(({ id, name, isError }) => ({ id, name, isError })), at: iso(now) });
