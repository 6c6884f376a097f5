import { randomUUID } from 'node:crypto';
import { agentTaskAddressOf, type AgentTaskInput } from '../../actors/index.ts';
import type { AgentScope, Store, ThreadScope } from '../../store/index.ts';
import type { ActorSystem } from '../core/actor-host/index.ts';
import { PlatformError } from '../core/errors/index.ts';
import { TERMINAL, type A2aCaller, type A2aMessage, type A2aSendParams } from './a2a-shapes.ts';
import { taskKey } from './task-views.ts';

export interface StartedRun {
  address: string;
  taskId: string;
  contextId: string;
  scope: AgentScope;
}

export interface RunStartDeps {
  store: Pick<Store, 'agentTasks' | 'agentThreads'>;
  actors: Pick<ActorSystem, 'create'>;
  now: () => number;
  maxSteps: number;
}

const scopeOf = (c: A2aCaller): AgentScope => ({ accountId: c.accountId, agentId: c.agentId });
export const threadScopeOf = (c: A2aCaller): ThreadScope => ({ accountId: c.accountId, agentId: c.agentId, ownerId: c.principalId });
export const addressOf = (c: AgentScope, taskId: string) => agentTaskAddressOf(c.accountId, c.agentId, taskKey(taskId));

/**
 * Starts a run of the agent on one message (SendMessage and SendStreamingMessage): resolves the thread (spec §4.3:
 * `contextId` continues a thread, omitted starts one, a referenced task's context must match), takes the task id
 * atomically (the client's, or a minted one; a taken id fails), appends the message to the thread and creates the
 * AgentTask actor, whose first model turn starts at once. `asTask`: the run is a task from the start, whatever it ends
 * on (a client that does not wait gets a task id it can ask about).
 */
export async function startRun(deps: RunStartDeps, params: A2aSendParams, caller: A2aCaller, opts: { asTask: boolean }): Promise<StartedRun> {
  const m = params.message;
  if (m.role !== 'ROLE_USER') throw new PlatformError('A2A_INVALID_PARAMS', 'message.role: a message to an agent is sent as ROLE_USER');
  const scope = scopeOf(caller);
  let contextId = m.contextId;
  if (m.taskId !== undefined) {
    const row = await deps.store.agentTasks.get(scope, m.taskId);
    if (row && row.visible && row.ownerId === caller.principalId) {
      if (contextId !== undefined && contextId !== row.contextId) throw contextMismatch('taskId', m.taskId);
      const why = TERMINAL.has(row.state) ? `has ended (${row.state})` : `is still running (${row.state})`;
      throw new PlatformError('A2A_UNSUPPORTED_OPERATION', `task ${m.taskId} ${why} and takes no further messages: omit taskId to start a new task (keep contextId to stay in the thread)`);
    }
    if (row) throw new PlatformError('A2A_TASK_EXISTS', `a task with id ${m.taskId} already exists: omit taskId to have one minted, or choose another`);
  }
  for (const ref of m.referenceTaskIds ?? []) {
    const row = await deps.store.agentTasks.get(scope, ref);
    if (!row || !row.visible || row.ownerId !== caller.principalId) throw new PlatformError('A2A_TASK_NOT_FOUND', `referenced task ${ref} not found`);
    if (contextId !== undefined && contextId !== row.contextId) throw contextMismatch('referenceTaskIds', ref);
    contextId ??= row.contextId;
  }
  contextId ??= randomUUID();
  const taskId = m.taskId ?? randomUUID();
  const at = new Date(deps.now()).toISOString();
  const thread = threadScopeOf(caller);
  if (!(await deps.store.agentTasks.reserve(scope, { id: taskId, contextId, ownerId: caller.principalId, state: 'TASK_STATE_WORKING', statusAt: at }))) {
    throw new PlatformError('A2A_TASK_EXISTS', `a task with id ${taskId} already exists: omit taskId to have one minted, or choose another`);
  }
  try {
    await deps.store.agentThreads.ensure(thread, contextId);
    const message: A2aMessage = { ...m, contextId, taskId };
    if (!(await deps.store.agentThreads.append(thread, contextId, { messageId: m.messageId, taskId, kind: 'user', body: message }))) {
      throw new PlatformError('A2A_INVALID_PARAMS', `message.messageId: message ${m.messageId} was sent in this context before; every message needs a new id`);
    }
    const input: AgentTaskInput = {
      accountId: caller.accountId,
      agentId: caller.agentId,
      taskId,
      contextId,
      caller: { principalId: caller.principalId, kind: caller.principalKind, role: caller.role, via: caller.via, ...(caller.actors?.length ? { actors: [...caller.actors] } : {}) },
      maxSteps: deps.maxSteps,
      at,
      visible: opts.asTask,
    };
    const address = addressOf(scope, taskId);
    await deps.actors.create(address, input);
    return { address, taskId, contextId, scope };
  } catch (err) {
    // Nothing runs under the id: give it back, so the client may send again with it.
    await deps.store.agentTasks.release(scope, taskId).catch(() => {});
    throw err;
  }
}

const contextMismatch = (field: string, id: string) =>
  new PlatformError('A2A_INVALID_PARAMS', `message.contextId: it differs from the context of task ${id} named in ${field}; omit contextId or send the task's`);
