import { randomUUID } from 'node:crypto';
import { agentTaskAddressOf, type AgentTaskInput, type ToolCallPlan } from '../../actors/index.ts';
import type { AgentScope, Store, ThreadRecordInput, ThreadScope } from '../../store/index.ts';
import type { ActorSystem } from '../core/actor-host/index.ts';
import { PlatformError } from '../core/errors/index.ts';
import { TERMINAL, type A2aCaller, type A2aMessage, type A2aPart, type A2aSendParams } from './a2a-shapes.ts';
import type { AttachmentOwner, StoredAttachment } from './attachment-records.ts';
import { taskKey } from './task-views.ts';

export interface StartedRun {
  address: string;
  taskId: string;
  contextId: string;
  scope: AgentScope;
}

export interface RunStartDeps {
  store: Pick<Store, 'agentTasks' | 'agentThreads'>;
  /**
   * Stores a message's raw and url parts by hash, with their limits (attachments.ts), as the account's attachments
   * of the task (attachment-records.ts); the thread keeps their ids and hashes.
   */
  attachments: (parts: readonly A2aPart[], caller: A2aCaller, owner: AttachmentOwner) => Promise<StoredAttachment[]>;
  actors: Pick<ActorSystem, 'create'>;
  now: () => number;
  maxSteps: number;
}

const scopeOf = (c: A2aCaller): AgentScope => ({ accountId: c.accountId, agentId: c.agentId });
export const threadScopeOf = (c: A2aCaller): ThreadScope => ({ accountId: c.accountId, agentId: c.agentId, ownerId: c.principalId });
export const addressOf = (c: AgentScope, taskId: string) => agentTaskAddressOf(c.accountId, c.agentId, taskKey(taskId));

/**
 * The text and data a message may carry, in UTF-8 bytes (ours: spec §8 caps files only). The thread keeps them and
 * every later turn sends them to the model, so megabytes of text would be written, read and serialized on the
 * node's thread turn after turn (DESIGN §5); a model's context holds about this much anyway. Files go to the blob
 * store by hash instead (attachments.ts), 20 MiB each.
 */
export const MAX_MESSAGE_TEXT_BYTES = 1024 * 1024;

/** Refuses a message whose text and data parts exceed MAX_MESSAGE_TEXT_BYTES, before anything is stored. */
export function checkMessageSize(parts: readonly A2aPart[]): void {
  let bytes = 0;
  for (const p of parts) {
    if (typeof p.text === 'string') bytes += Buffer.byteLength(p.text);
    else if (p.data !== undefined) bytes += Buffer.byteLength(JSON.stringify(p.data) ?? '');
    if (bytes > MAX_MESSAGE_TEXT_BYTES) {
      throw new PlatformError('A2A_MESSAGE_TOO_LARGE', `message.parts: the text and data parts of a message are more than ${MAX_MESSAGE_TEXT_BYTES} bytes (1 MiB) in UTF-8; send longer documents as file parts`);
    }
  }
}

/** A run whose message is in its thread, with its task id (taken already when the client chose it). */
export interface PreparedRun {
  scope: AgentScope;
  thread: ThreadScope;
  caller: A2aCaller;
  taskId: string;
  contextId: string;
  at: string;
  /** The client chose the id, so it was taken at once (the rule of spec §4.3 holds even if no task follows). */
  reserved: boolean;
  /** The user's message as the thread keeps it, and whether the thread is new (it has nothing else to read). */
  user: { record: ThreadRecordInput; newThread: boolean };
}

/**
 * The first half of a run (SendMessage and SendStreamingMessage): resolves the thread (spec §4.3: `contextId`
 * continues a thread, omitted starts one, a referenced task's context must match), takes a client's task id
 * atomically (a taken id fails), and appends the message to the thread now or leaves it to the first turn.
 */
export async function prepareRun(deps: RunStartDeps, params: A2aSendParams, caller: A2aCaller, opts: { /** Write the message now (else the first turn writes it with its answer). */ write: boolean }): Promise<PreparedRun> {
  const m = params.message;
  if (m.role !== 'ROLE_USER') throw new PlatformError('A2A_INVALID_PARAMS', 'message.role: a message to an agent is sent as ROLE_USER');
  checkMessageSize(m.parts);
  const scope = scopeOf(caller);
  let contextId = m.contextId;
  if (m.taskId !== undefined) {
    const row = await deps.store.agentTasks.get(scope, m.taskId);
    if (row && row.visible && row.ownerId === caller.principalId) {
      if (contextId !== undefined && contextId !== row.contextId) throw contextMismatch('taskId', m.taskId);
      const why = TERMINAL.has(row.state) ? `has ended (${row.state})` : `is still running (${row.state})`;
      throw new PlatformError('A2A_UNSUPPORTED_OPERATION', `task ${m.taskId} ${why} and takes no further messages: omit taskId to start a new task (keep contextId to stay in the thread)`);
    }
    if (row) throw taskExists(m.taskId);
  }
  for (const ref of m.referenceTaskIds ?? []) {
    const row = await deps.store.agentTasks.get(scope, ref);
    if (!row || !row.visible || row.ownerId !== caller.principalId) throw new PlatformError('A2A_TASK_NOT_FOUND', `referenced task ${ref} not found`);
    if (contextId !== undefined && contextId !== row.contextId) throw contextMismatch('referenceTaskIds', ref);
    contextId ??= row.contextId;
  }
  const taskId = m.taskId ?? randomUUID();
  const newThread = contextId === undefined;
  contextId ??= randomUUID();
  const stored = await deps.attachments(m.parts, caller, { taskId, contextId });
  const message: A2aMessage = { ...m, parts: keptParts(m.parts, stored), contextId, taskId };
  const run: PreparedRun = {
    scope,
    thread: threadScopeOf(caller),
    caller,
    taskId,
    contextId,
    at: new Date(deps.now()).toISOString(),
    reserved: m.taskId !== undefined,
    user: { record: { messageId: m.messageId, taskId, kind: 'user', body: message }, newThread },
  };
  if (run.reserved && !(await reserve(deps, run))) throw taskExists(run.taskId);
  if (opts.write && !(await deps.store.agentThreads.start(run.thread, run.contextId, [run.user.record]))) throw await messageReused(deps, run);
  return run;
}

/** A message id the thread holds already: nothing was written for this message (its reserved task id is given back). */
export async function messageReused(deps: RunStartDeps, run: PreparedRun): Promise<PlatformError> {
  if (run.reserved) await deps.store.agentTasks.release(run.scope, run.taskId).catch(() => {});
  return new PlatformError('A2A_INVALID_PARAMS', `message.messageId: message ${run.user.record.messageId} was sent in this context before; every message needs a new id`);
}

/**
 * The second half: the AgentTask actor of a prepared run, created (with its projection row) so its first step starts
 * at once: a model turn, or the tool round a first turn taken in the request asked for (`calls`).
 */
export async function launchRun(
  deps: RunStartDeps,
  run: PreparedRun,
  opts: { visible: boolean; calls?: ToolCallPlan[]; at?: string; /** See AgentTaskInput.quiet. */ quiet?: boolean; /** Runs once the task exists, before its run starts (inline push configs). */ onTask?: (taskId: string) => Promise<unknown> },
): Promise<StartedRun> {
  // A minted id (a random UUID) is nobody's yet: the actor's first commit writes its row (the projection upserts),
  // unless something must attach to the task before it runs.
  if (!run.reserved && opts.onTask && !(await reserve(deps, run))) throw taskExists(run.taskId);
  const { caller } = run;
  try {
    await opts.onTask?.(run.taskId);
    const input: AgentTaskInput = {
      accountId: caller.accountId,
      agentId: caller.agentId,
      taskId: run.taskId,
      contextId: run.contextId,
      caller: { principalId: caller.principalId, kind: caller.principalKind, role: caller.role, via: caller.via, ...(caller.actors?.length ? { actors: [...caller.actors] } : {}) },
      maxSteps: deps.maxSteps,
      at: opts.at ?? run.at,
      visible: opts.visible,
      ...(opts.quiet ? { quiet: true } : {}),
      ...(opts.calls?.length ? { calls: opts.calls } : {}),
    };
    const address = addressOf(run.scope, run.taskId);
    await deps.actors.create(address, input);
    return { address, taskId: run.taskId, contextId: run.contextId, scope: run.scope };
  } catch (err) {
    // Nothing runs under the id: give it back, so the client may send again with it.
    await deps.store.agentTasks.release(run.scope, run.taskId).catch(() => {});
    throw err;
  }
}

/**
 * The parts as the thread keeps them: an inline file becomes a data part naming its stored bytes (`attachment`: the
 * id `GET /v1/files/{id}` serves it under, sha256, size, and an image's dimensions), a url part keeps its url with the same facts in its metadata. Histories
 * stay small, and the bytes are read by hash where they are needed.
 */
function keptParts(parts: A2aPart[], stored: StoredAttachment[]): A2aPart[] {
  const byPart = new Map(stored.map((a) => [a.part, a]));
  return parts.map((p, i) => {
    const a = byPart.get(i);
    if (!a) return p;
    const facts = { id: a.id, sha256: a.hash, size: a.size, ...(a.width !== undefined ? { width: a.width, height: a.height } : {}) };
    const named = { ...(a.filename !== null ? { filename: a.filename } : {}), mediaType: a.mediaType };
    return a.kind === 'raw' ? { data: { attachment: facts }, ...named } : { url: p.url!, ...named, metadata: { ...p.metadata, attachment: facts } };
  });
}

const reserve = (deps: RunStartDeps, run: PreparedRun) =>
  deps.store.agentTasks.reserve(run.scope, { id: run.taskId, contextId: run.contextId, ownerId: run.caller.principalId, state: 'TASK_STATE_WORKING', statusAt: run.at });
const taskExists = (id: string) => new PlatformError('A2A_TASK_EXISTS', `a task with id ${id} already exists: omit taskId to have one minted, or choose another`);
const contextMismatch = (field: string, id: string) =>
  new PlatformError('A2A_INVALID_PARAMS', `message.contextId: it differs from the context of task ${id} named in ${field}; omit contextId or send the task's`);
