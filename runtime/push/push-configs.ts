import { randomUUID } from 'node:crypto';
import type { PushConfigCursor, PushConfigRecord, PushTaskRef, Repositories } from '../../store/index.ts';
import { PlatformError } from '../core/errors/index.ts';
import { checkPushSecrets, checkPushUrl, PUSH_LIMITS } from './push-rules.ts';

/**
 * Who asks, from the authenticated call (the A2A surface's A2aCallContext has these members): storage is keyed by
 * account and agent, never by anything on the wire.
 */
export interface PushScope {
  accountId: string;
  agentId: string;
  principalId: string;
}

/**
 * Whether the task exists in this account and agent and the principal may see it. A task that has ended is still
 * visible: configs on it are accepted and stored.
 */
export type TaskVisible = (accountId: string, agentId: string, taskId: string, principalId: string) => Promise<boolean>;

/** CreateTaskPushNotificationConfig params (the A2A surface's PushConfig). */
export interface PushConfigInput {
  taskId: string;
  url: string;
  /** Minted (a UUID) when omitted or empty. */
  id?: string;
  token?: string;
  authentication?: { scheme: string; credentials?: string };
}

/** A config as A2A shows it; `token` and `authentication` only when set. */
export interface PushConfigView {
  taskId: string;
  id: string;
  url: string;
  token?: string;
  authentication?: { scheme: 'bearer' | 'basic'; credentials: string };
}

export interface PushConfigRefInput {
  taskId: string;
  id: string;
}

export interface ListPushConfigsInput {
  taskId: string;
  /** 1..100; unset or 0: 50. */
  pageSize?: number;
  pageToken?: string;
}

export interface PushConfigPage {
  configs: PushConfigView[];
  /** Empty on the last page. */
  nextPageToken: string;
}

export interface PushConfigsDeps {
  /** Read at every call, so it may be a getter bound after start-up. */
  store: Pick<Repositories, 'pushConfigs'>;
  taskVisible: TaskVisible;
  /** The operator's development switch (PLATFORM_PUSH_ALLOW_LOOPBACK): loopback receivers, over http too. */
  allowLoopback: boolean;
  newId?: () => string;
}

/** The four push-config methods of A2A 1.0 over the store. */
export interface PushConfigs {
  /** Throws what `create` would refuse about the config itself (URL and secrets), before any task exists. */
  vet(params: Pick<PushConfigInput, 'url' | 'token' | 'authentication'>): void;
  /** Registers a webhook; an existing id on the same task is replaced (A2A "set"), not refused. */
  create(params: PushConfigInput, scope: PushScope): Promise<PushConfigView>;
  get(params: PushConfigRefInput, scope: PushScope): Promise<PushConfigView>;
  list(params: ListPushConfigsInput, scope: PushScope): Promise<PushConfigPage>;
  /** Idempotent: a config that is gone is not an error (its task must still be visible). */
  delete(params: PushConfigRefInput, scope: PushScope): Promise<void>;
}

const quoted = (s: string) => JSON.stringify(s.length > 100 ? `${s.slice(0, 100)}...` : s);

function view(r: Omit<PushConfigRecord, 'createdAt'>): PushConfigView {
  return {
    taskId: r.taskId,
    id: r.id,
    url: r.url,
    ...(r.token !== null ? { token: r.token } : {}),
    ...(r.authScheme !== null && r.authCredentials !== null ? { authentication: { scheme: r.authScheme, credentials: r.authCredentials } } : {}),
  };
}

/** Page tokens are opaque to clients: the cursor after the last config shown, as base64url JSON. */
const pageToken = (c: PushConfigCursor) => Buffer.from(JSON.stringify([c.position, c.id])).toString('base64url');

function cursorOf(token: string): PushConfigCursor {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    parsed = null;
  }
  if (Array.isArray(parsed) && parsed.length === 2 && typeof parsed[0] === 'string' && /^\d{1,18}$/.test(parsed[0]) && typeof parsed[1] === 'string') {
    return { position: parsed[0], id: parsed[1] };
  }
  throw new PlatformError('A2A_INVALID_PARAMS', 'Invalid params: pageToken is not one this server issued; start again without it');
}

function pageSizeOf(size: number | undefined): number {
  if (size === undefined || size === 0) return PUSH_LIMITS.pageSize;
  if (!Number.isInteger(size) || size < 1 || size > PUSH_LIMITS.maxPageSize) {
    throw new PlatformError('A2A_INVALID_PARAMS', `Invalid params: pageSize must be from 1 to ${PUSH_LIMITS.maxPageSize}`);
  }
  return size;
}

/**
 * Push notification configs (spec §2 A2A records, §4.3): scoped by the caller's account and agent, then by task, so
 * config ids are per task and a client may reuse its ids across tasks. The task must be visible to the caller (else
 * A2A_TASK_NOT_FOUND: missing and not-yours look the same); a task that already ended still takes configs (they are
 * stored; nothing is delivered after the end). A task holds at most 10 configs. Nothing here logs a token or
 * credentials.
 */
export function createPushConfigs(deps: PushConfigsDeps): PushConfigs {
  const newId = deps.newId ?? randomUUID;
  const repo = () => deps.store.pushConfigs;

  async function taskOf(taskId: string, scope: PushScope): Promise<PushTaskRef> {
    if (!(await deps.taskVisible(scope.accountId, scope.agentId, taskId, scope.principalId))) {
      throw new PlatformError('A2A_TASK_NOT_FOUND', `Task not found: ${quoted(taskId)}`);
    }
    return { accountId: scope.accountId, agentId: scope.agentId, taskId };
  }

  return {
    vet(params) {
      checkPushUrl(params.url, { allowLoopback: deps.allowLoopback });
      checkPushSecrets(params.token, params.authentication);
    },
    async create(params, scope) {
      checkPushUrl(params.url, { allowLoopback: deps.allowLoopback });
      const secrets = checkPushSecrets(params.token, params.authentication);
      const task = await taskOf(params.taskId, scope);
      const record = { ...task, id: params.id || newId(), url: params.url, ...secrets };
      const outcome = await repo().put(record, PUSH_LIMITS.configsPerTask);
      if (outcome === 'limit') {
        throw new PlatformError(
          'A2A_PUSH_CONFIG_LIMIT',
          `Push notification config refused: task ${quoted(params.taskId)} already holds ${PUSH_LIMITS.configsPerTask} configs, the most a task may hold; delete one or replace one by its id`,
        );
      }
      return view(record);
    },

    async get(params, scope) {
      const found = await repo().get(await taskOf(params.taskId, scope), params.id);
      if (!found) throw new PlatformError('A2A_PUSH_CONFIG_NOT_FOUND', `Push notification config not found: ${quoted(params.id)} on task ${quoted(params.taskId)}`);
      return view(found);
    },

    async list(params, scope) {
      const limit = pageSizeOf(params.pageSize);
      const after = params.pageToken ? cursorOf(params.pageToken) : null;
      const page = await repo().page(await taskOf(params.taskId, scope), after, limit);
      return { configs: page.configs.map(view), nextPageToken: page.next ? pageToken(page.next) : '' };
    },

    async delete(params, scope) {
      await repo().delete(await taskOf(params.taskId, scope), params.id);
    },
  };
}

/**
 * The four push-config methods of the agent gateway's backend (edge/a2a's A2aBackend), served by `push`: spread them
 * into the backend the agent runtime builds. The call context's accountId, agentId and principalId are the scope.
 */
export function pushBackendMethods(push: PushConfigs) {
  return {
    createPushConfig: (params: PushConfigInput, ctx: PushScope) => push.create(params, ctx),
    getPushConfig: (params: PushConfigRefInput, ctx: PushScope) => push.get(params, ctx),
    listPushConfigs: (params: ListPushConfigsInput, ctx: PushScope) => push.list(params, ctx),
    deletePushConfig: (params: PushConfigRefInput, ctx: PushScope) => push.delete(params, ctx),
  };
}
