import type { Logger } from 'pino';
import type { AgentTaskContext } from '../../actors/index.ts';
import { configsOfRead, pushConfigsRead, type PushConfigRecord, type PushTaskRef, type Repositories, type RowRead } from '../../store/index.ts';
import type { ProjectedChange } from '../core/actor-host/index.ts';
import { egressFetch, type EgressOptions } from '../core/egress/index.ts';
import { isPlatformError, PlatformError } from '../core/errors/index.ts';
import { taskFromContext, type A2aTask } from '../agents/index.ts';
import { createPushLanes, type PushLaneFigures, type PushLaneName, type PushLaneOptions } from './push-lanes.ts';

/** States whose notification goes on the reserved lane (spec §6); every other change is best effort. */
export const RESERVED_STATES: ReadonlySet<string> = new Set([
  'TASK_STATE_COMPLETED',
  'TASK_STATE_FAILED',
  'TASK_STATE_CANCELED',
  'TASK_STATE_REJECTED',
  'TASK_STATE_INPUT_REQUIRED',
  'TASK_STATE_AUTH_REQUIRED',
]);

/** The media type of an A2A 1.0 JSON body. */
export const PUSH_CONTENT_TYPE = 'application/a2a+json';
/** What a receiver's answer may weigh: it is read and dropped. */
const MAX_ANSWER_BYTES = 64 * 1024;

export interface PushDeliveryDeps {
  store: Pick<Repositories, 'pushConfigs'>;
  /** The task as its owner's GetTask shows it (null: no visible task, nothing to notify). */
  snapshot: (ref: PushTaskRef) => Promise<A2aTask | null>;
  lanes: PushLaneOptions;
  /** How deliveries reach out: the loopback switch (PLATFORM_PUSH_ALLOW_LOOPBACK), trusted CAs, a test resolver. */
  egress: Pick<EgressOptions, 'allowLoopback' | 'ca' | 'resolve' | 'timeoutMs'>;
  logger: Logger;
}

/** One notification waiting in a lane: a task's snapshot for one of its configs. */
interface Notice {
  ref: PushTaskRef;
  state: string;
  config: PushConfigRecord;
  body: string;
}

/**
 * Which lane a committed turn of an AgentTask notifies on, or null when the wire view of the task did not move: a
 * new state (a reserved one, or WORKING), or new artifacts in the same state (artifact progress). A run that is not a
 * task (a bare reply) notifies nothing.
 */
export function laneOfChange(change: ProjectedChange): PushLaneName | null {
  const after = change.after.context as unknown as AgentTaskContext;
  if (!after.visible || change.after.value === 'answered') return null;
  const now = taskFromContext(after);
  const prev = change.previous?.context as unknown as AgentTaskContext | undefined;
  const before = prev?.visible ? taskFromContext(prev) : null;
  if (before?.status.state !== now.status.state) return RESERVED_STATES.has(now.status.state) ? 'reserved' : 'bestEffort';
  return JSON.stringify(before.artifacts) === JSON.stringify(now.artifacts) ? null : 'bestEffort';
}

/** What a log line of a delivery says: never the token, the credentials or the url's path and query. */
const fieldsOf = (n: Notice, lane: PushLaneName) => ({ accountId: n.ref.accountId, agentId: n.ref.agentId, taskId: n.ref.taskId, configId: n.config.id, origin: new URL(n.config.url).origin, state: n.state, lane });

const refOf = (c: AgentTaskContext): PushTaskRef => ({ accountId: c.accountId, agentId: c.agentId, taskId: c.taskId });

/** The headers of a delivery (spec §6): the registered token and credentials, exactly as registered. */
function headersOf(config: PushConfigRecord): Record<string, string> {
  return {
    'content-type': PUSH_CONTENT_TYPE,
    ...(config.token !== null ? { 'a2a-notification-token': config.token } : {}),
    ...(config.authScheme !== null && config.authCredentials !== null ? { authorization: `${config.authScheme === 'bearer' ? 'Bearer' : 'Basic'} ${config.authCredentials}` } : {}),
  };
}

/**
 * Push notification delivery (spec §6; A2A-PUSH-12..19). On the node that owns a task's actor, each committed turn
 * that moves the task's wire view (`afterTurn`, the AgentTask kind's hook) reads the task's configs and, when it has
 * any, the task as its owner's GetTask shows it, and queues one POST per config — body `{task}`, the registered
 * token and authentication as headers — on the lane its state belongs to (push-lanes.ts). Every POST goes through
 * egressFetch, so the url is vetted again at dispatch: a name that now resolves to a private address is refused.
 * Nothing waits for a delivery and nothing it does fails a turn; failures are logged without the token, the
 * credentials or the url's path.
 */
export function createPushDelivery(deps: PushDeliveryDeps) {
  const lanes = createPushLanes(deps.lanes);
  let closed = false;

  async function send(n: Notice): Promise<void> {
    const res = await egressFetch(n.config.url, { ...deps.egress, method: 'POST', headers: headersOf(n.config), body: n.body, maxBytes: MAX_ANSWER_BYTES });
    if (res.status < 200 || res.status > 299) {
      throw new PlatformError('PUSH_DELIVERY_REJECTED', `${new URL(n.config.url).origin} answered ${res.status} to a push notification`, { data: { status: res.status } });
    }
  }

  function giveUp(n: Notice, lane: PushLaneName, reason: 'dropped' | 'failed', err: unknown, attempts: number) {
    const fields = { ...fieldsOf(n, lane), attempts };
    if (reason === 'dropped') deps.logger.debug(fields, 'push notification dropped: a newer one or other traffic of the account took its place');
    else {
      const code = isPlatformError(err) ? err.code : 'PLT_INTERNAL';
      deps.logger.warn({ ...fields, code, error: (err as Error)?.message }, lane === 'reserved' ? 'push notification not delivered after its retry' : 'push notification not delivered');
    }
  }

  /** Queues the task's snapshot for each of its configs; `task` and `found` (the configs) when the caller has them. */
  async function notify(ref: PushTaskRef, lane: PushLaneName, task?: A2aTask, found?: PushConfigRecord[]): Promise<void> {
    if (closed) return;
    const configs = found ?? (await deps.store.pushConfigs.forTask(ref));
    if (configs.length === 0) return;
    const snapshot = task ?? (await deps.snapshot(ref));
    if (!snapshot || closed) return;
    const body = JSON.stringify({ task: snapshot });
    for (const config of configs) {
      const n: Notice = { ref, state: snapshot.status.state, config, body };
      lanes.submit(lane, {
        accountId: ref.accountId,
        key: `${ref.agentId}/${ref.taskId}#${config.id}`,
        attempt: () =>
          (closed ? Promise.reject(new PlatformError('PLT_ACTOR_HOST_STOPPED', 'the node is stopping')) : send(n)).catch((err: unknown) => {
            deps.logger.debug({ ...fieldsOf(n, lane), code: isPlatformError(err) ? err.code : 'PLT_INTERNAL', error: (err as Error)?.message }, 'push notification attempt failed');
            throw err;
          }),
        onGiveUp: (reason, err, attempts) => giveUp(n, lane, reason, err, attempts),
      });
    }
  }

  const failed = (ref: PushTaskRef) => (err: unknown) => deps.logger.warn({ accountId: ref.accountId, taskId: ref.taskId, err }, 'push notifications of a task could not be queued');

  return {
    /** The AgentTask kind's afterTurn hook: fire and forget, with the configs its turn read (readWithTurn). */
    afterTurn(change: ProjectedChange, read?: unknown): void {
      const lane = laneOfChange(change);
      if (!lane) return;
      const ref = refOf(change.after.context as unknown as AgentTaskContext);
      void notify(ref, lane, undefined, read === undefined ? undefined : configsOfRead(read)).catch(failed(ref));
    },
    /** A turn that moves the task's wire view reads the task's configs in its own statement: no round trip after it. */
    readWithTurn(change: ProjectedChange): RowRead | null {
      return laneOfChange(change) ? pushConfigsRead(refOf(change.after.context as unknown as AgentTaskContext)) : null;
    },
    /** A task written without an actor (a first turn that failed): its snapshot, on the lane of its state. */
    taskWritten(ref: PushTaskRef, task: A2aTask): void {
      void notify(ref, RESERVED_STATES.has(task.status.state) ? 'reserved' : 'bestEffort', task).catch(failed(ref));
    },
    /** Counts per lane since start: the node's, or one account's. */
    figures: (accountId?: string): PushLaneFigures => lanes.figures(accountId),
    /** Stops queuing; what waits is given up (failed) when its turn comes. */
    close(): void {
      closed = true;
    },
  };
}

export type PushDelivery = ReturnType<typeof createPushDelivery>;
