import type { RunToolCall, RunToolResult } from '../../runtime/index.ts';
import type { PrincipalKind, Role } from '../../store/index.ts';
import type {
  AgentCard,
  CancelTaskParams,
  GetTaskParams,
  ListPushConfigsParams,
  ListPushConfigsResult,
  ListTasksParams,
  ListTasksResult,
  PushConfig,
  PushConfigRef,
  SendMessageParams,
  SendMessageResult,
  StreamResponse,
  SubscribeToTaskParams,
  Task,
} from './schemas.ts';

/**
 * Who calls, resolved by the surface from the credential alone: the wire's `tenant` never reaches a backend.
 * Storage is keyed by `accountId` and `agentId` (spec §4.3).
 */
export interface A2aCallContext {
  accountId: string;
  agentId: string;
  /** The principal the call runs as: the API key's service principal, or the agent token's subject. */
  principalId: string;
  principalKind: PrincipalKind;
  /**
   * The lowest role along the delegation chain: a call never has more authority than any principal in it (spec §5,
   * "no elevation"). Every principal in the chain holds execute authority, or the call never got here.
   */
  role: Role;
  via: 'api_key' | 'agent_token';
  /** An agent token's actors, the one presenting it first; empty for an API key. */
  actors: string[];
  /** Extensions the request activated (A2A-Extensions): payloads may be tagged with these URIs only. */
  extensions: string[];
  /** Aborted when the client goes away before the answer is complete. */
  signal: AbortSignal;
}

/** One item of a run's stream as the AG-UI route reads it: an A2A frame, or a tool call or its result. */
export type RunEvent = StreamResponse | { toolCall: RunToolCall } | { toolResult: RunToolResult };

/**
 * What the agent gateway asks of the agent runtime: the ten task and push-config methods of A2A 1.0 over the
 * normalized params of schemas.ts (camelCase, enum names, no `tenant`). Results must be the wire shapes of
 * schemas.ts; the surface checks them and answers -32006 for one that is not. Failures are PlatformErrors: the A2A
 * task codes (`A2A_TASK_NOT_FOUND`, `A2A_TASK_NOT_CANCELABLE`, `A2A_TASK_EXISTS`, `A2A_UNSUPPORTED_OPERATION`, ...)
 * or any other registered code, which edge/a2a/errors.ts maps by kind. The streams end when the task reaches a
 * terminal state or an interrupt; the surface also stops after a frame showing a terminal state.
 */
export interface A2aBackend {
  sendMessage(params: SendMessageParams, ctx: A2aCallContext): Promise<SendMessageResult>;
  /** The first frame is the Task (or the one Message of a bare reply); then updates. */
  sendStreamingMessage(params: SendMessageParams, ctx: A2aCallContext): AsyncIterable<StreamResponse>;
  /** The frames of sendStreamingMessage with the run's tool calls and results, for the AG-UI route (without it, AG-UI shows no tool calls). */
  streamRun?(params: SendMessageParams, ctx: A2aCallContext): AsyncIterable<RunEvent>;
  getTask(params: GetTaskParams, ctx: A2aCallContext): Promise<Task>;
  listTasks(params: ListTasksParams, ctx: A2aCallContext): Promise<ListTasksResult>;
  cancelTask(params: CancelTaskParams, ctx: A2aCallContext): Promise<Task>;
  /** The current snapshot first, then live updates; a terminal task is A2A_UNSUPPORTED_OPERATION. */
  subscribeToTask(params: SubscribeToTaskParams, ctx: A2aCallContext): AsyncIterable<StreamResponse>;
  /** Without it, GetExtendedAgentCard answers the public card (spec §4.3). */
  getExtendedAgentCard?(ctx: A2aCallContext): Promise<AgentCard>;
  createPushConfig(params: PushConfig, ctx: A2aCallContext): Promise<PushConfig>;
  getPushConfig(params: PushConfigRef, ctx: A2aCallContext): Promise<PushConfig>;
  listPushConfigs(params: ListPushConfigsParams, ctx: A2aCallContext): Promise<ListPushConfigsResult>;
  /** Idempotent: deleting a config that is gone is not an error. */
  deletePushConfig(params: PushConfigRef, ctx: A2aCallContext): Promise<void>;
}
