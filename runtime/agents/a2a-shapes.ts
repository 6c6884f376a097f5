/**
 * The A2A 1.0 shapes the agent runtime produces and reads (spec §2 and §4.3), as plain types: the agent gateway owns
 * their schemas and checks every result against them before it answers, so these only have to agree with them
 * (the composition root hands this runtime to the gateway as its backend, which the compiler checks).
 */

export type A2aTaskState =
  | 'TASK_STATE_SUBMITTED'
  | 'TASK_STATE_WORKING'
  | 'TASK_STATE_COMPLETED'
  | 'TASK_STATE_FAILED'
  | 'TASK_STATE_CANCELED'
  | 'TASK_STATE_INPUT_REQUIRED'
  | 'TASK_STATE_REJECTED'
  | 'TASK_STATE_AUTH_REQUIRED';

export const TERMINAL: ReadonlySet<string> = new Set(['TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED', 'TASK_STATE_REJECTED']);
/** States in which a run waits on someone: a stream ends there, and a blocking send answers (spec §3). */
export const INTERRUPTED: ReadonlySet<string> = new Set(['TASK_STATE_INPUT_REQUIRED', 'TASK_STATE_AUTH_REQUIRED']);

export interface A2aPart {
  text?: string;
  raw?: string;
  url?: string;
  data?: unknown;
  filename?: string;
  mediaType?: string;
  metadata?: Record<string, unknown>;
}

export interface A2aMessage {
  messageId: string;
  role: 'ROLE_USER' | 'ROLE_AGENT';
  parts: A2aPart[];
  contextId?: string;
  taskId?: string;
  metadata?: Record<string, unknown>;
  extensions?: string[];
  referenceTaskIds?: string[];
}

export interface A2aArtifact {
  artifactId: string;
  parts: A2aPart[];
}

export interface A2aTaskStatus {
  state: A2aTaskState;
  timestamp: string;
  message?: A2aMessage;
}

export interface A2aTask {
  id: string;
  contextId: string;
  status: A2aTaskStatus;
  artifacts?: A2aArtifact[];
  history?: A2aMessage[];
}

export type A2aStreamResponse =
  | { task: A2aTask }
  | { message: A2aMessage }
  | { statusUpdate: { taskId: string; contextId: string; status: A2aTaskStatus } }
  | { artifactUpdate: { taskId: string; contextId: string; artifact: A2aArtifact; append: boolean; lastChunk: boolean } };

export interface A2aSendParams {
  message: A2aMessage;
  configuration?: { historyLength?: number; returnImmediately?: boolean; acceptedOutputModes?: string[] };
  metadata?: Record<string, unknown>;
}

export interface A2aListParams {
  contextId?: string;
  status?: A2aTaskState;
  pageSize?: number;
  pageToken?: string;
  historyLength?: number;
  statusTimestampAfter?: string;
  includeArtifacts?: boolean;
}

/** Who calls: resolved by the gateway from the credential alone (a `tenant` on the wire never gets here). */
export interface A2aCaller {
  accountId: string;
  agentId: string;
  principalId: string;
  principalKind: string;
  role: string;
  via: 'api_key' | 'agent_token';
  /** An agent token's delegation chain, the actor presenting it first (the gateway's context carries it). */
  actors?: readonly string[];
  signal: AbortSignal;
}
