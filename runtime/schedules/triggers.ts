import { setTimeout as sleep } from 'node:timers/promises';
import { createHash, createHmac, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type { TaskCaller } from '../../actors/index.ts';
import type { Role, Store, TriggerEvent, TriggerKind, TriggerRow } from '../../store/index.ts';
import { PlatformError } from '../core/errors/index.ts';
import type { Sealer } from '../connectors/index.ts';
import { callerSnapshot, hasAuthority, type Caller } from '../identity/index.ts';
import { lowerRole, startAgentRun, type AgentRunDeps } from './agent-run.ts';

export const TRIGGER_LIMITS = {
  perAgent: 100,
  perAccount: 1000,
  messageBytes: 16 * 1024,
  /** A delivery's body: webhook payloads (GitHub's, Stripe's) are far smaller; its JSON goes to the run as a data part. */
  bodyBytes: 256 * 1024,
  /** How far a delivery's timestamp may be from the node's clock, either way. */
  toleranceSeconds: 300,
} as const;

/** The headers a webhook delivery signs with (docs/schedules.md, "Triggers"). */
export const TRIGGER_HEADERS = { timestamp: 'x-platform-timestamp', signature: 'x-platform-signature' } as const;
export const TRIGGER_EVENTS: readonly TriggerEvent[] = ['completed', 'failed', 'canceled'];

export interface TriggerRequest {
  kind: TriggerKind;
  message: string;
  contextId?: string;
  originTaskId?: string;
  workflowId?: string;
  events?: string[];
}

/** A workflow run that ended (the WorkflowRun's `runEnded` effect). */
export interface WorkflowEnded {
  accountId: string;
  workflowId: string;
  runId: string;
  ownerId: string;
  status: string;
  output: unknown;
  error: string | null;
}

export interface Delivery {
  accountId: string;
  agentId: string;
  triggerId: string;
  timestamp: string | undefined;
  signature: string | undefined;
  body: Buffer;
  /** The body as the run gets it, read only once the signature holds (JSON in the task pool when large). */
  payload: () => Promise<unknown>;
}

export interface TriggersDeps extends AgentRunDeps {
  store: Pick<Store, 'triggers' | 'agents' | 'principals' | 'agentTasks' | 'workflows' | 'accounts' | 'tx'>;
  sealer: Sealer;
  /** The agent gateway's origin of an agent handle. */
  agentUrl: (handle: string) => string;
  now: () => number;
}

const iso = (ms: number) => new Date(ms).toISOString();
/** Attempts at a workflow trigger's start that failed for a passing reason: 0.5, 1, 2, 4 s apart. */
const TRIGGER_RETRIES = 5;
const invalid = (m: string) => new PlatformError('TRIGGER_INVALID', m);
const notFound = (id: string) => new PlatformError('TRIGGER_NOT_FOUND', `no trigger ${id} visible to this caller`);
const badSignature = (m: string) => new PlatformError('TRIGGER_SIGNATURE_INVALID', m);
const newSecret = () => `whsec_${randomBytes(32).toString('base64url')}`;
/** The signature of a delivery: HMAC-SHA256 over `{timestamp}.{raw body}`, hex. */
export const triggerSignature = (secret: string, timestamp: string, body: Buffer) => createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest('hex');

/**
 * Triggers (issue 15 §3): a signed webhook or a workflow run's end starts a run of an agent, as the principal who made
 * the trigger. A webhook delivery's task id comes from its signature, so a delivery sent twice starts one task, and one
 * replayed later is refused by its timestamp; a workflow run's end starts one task per trigger and run.
 */
export function createTriggers(deps: TriggersDeps) {
  const visible = (c: Caller, t: TriggerRow) => hasAuthority(c.role, 'write') || t.ownerId === c.principalId;
  const found = async (c: Caller, id: string) => {
    const t = /^[0-9a-f-]{36}$/.test(id) ? await deps.store.triggers.get(c.accountId, id) : null;
    if (!t || !visible(c, t)) throw notFound(id);
    return t;
  };
  /** Whether a trigger's maker may read every user's runs now: an admin or owner then and now (the lower role counts). */
  const seesEveryRun = async (t: TriggerRow) => {
    const member = await deps.store.principals.get(t.accountId, t.ownerId);
    if (!member || member.status !== 'active' || !member.role) return false;
    return hasAuthority(lowerRole(member.role, (t.caller as unknown as TaskCaller).role as Role), 'write');
  };
  /** Each webhook trigger's url (null for a workflow trigger), each agent read once for a page of triggers. */
  const urlsOf = async (rows: TriggerRow[]): Promise<(string | null)[]> => {
    const handles = new Map<string, Promise<string | null>>();
    const handleOf = (t: TriggerRow) => {
      if (!handles.has(t.agentId)) handles.set(t.agentId, deps.store.agents.get(t.accountId, t.agentId).then((a) => a?.handle ?? null));
      return handles.get(t.agentId)!;
    };
    return Promise.all(rows.map(async (t) => {
      const handle = t.kind === 'webhook' ? await handleOf(t) : null;
      return handle ? `${deps.agentUrl(handle)}/triggers/${t.id}` : null;
    }));
  };
  const urlOf = async (t: TriggerRow) => (await urlsOf([t]))[0]!;

  async function fire(t: TriggerRow, taskId: string, parts: { text?: string; data?: unknown }[], signal?: AbortSignal) {
    const r = await startAgentRun(deps, { accountId: t.accountId, agentId: t.agentId, maker: t.caller as unknown as TaskCaller, taskId, parts, contextId: t.contextId, metadata: { trigger_id: t.id }, ...(signal ? { signal } : {}) });
    if (!r.ok || !r.existed) await deps.store.triggers.fired(t.accountId, t.id, { taskId: r.ok ? taskId : null, at: iso(deps.now()), error: r.ok ? null : r.error });
    return r;
  }

  return {
    urlOf,
    urlsOf,

    /** Makes a trigger of `agentId` for `caller` (execute authority); a webhook's secret is answered this once. */
    async create(caller: Caller, agentId: string, r: TriggerRequest): Promise<{ trigger: TriggerRow; url: string | null; secret: string | null }> {
      if (!hasAuthority(caller.role, 'execute')) throw new PlatformError('MGMT_FORBIDDEN', `forbidden: the ${caller.role} role lacks execute authority`);
      if (r.kind !== 'webhook' && r.kind !== 'workflow') throw invalid('kind: webhook or workflow');
      if (typeof r.message !== 'string' || r.message.trim() === '') throw invalid('message: the text each run starts with');
      if (Buffer.byteLength(r.message) > TRIGGER_LIMITS.messageBytes) throw invalid(`message: at most ${TRIGGER_LIMITS.messageBytes} bytes`);
      if (r.message.includes('\0')) throw invalid('message: no NUL characters');
      let events: TriggerEvent[] | null = null;
      if (r.kind === 'workflow') {
        if (!r.workflowId || !/^[0-9a-f-]{36}$/.test(r.workflowId) || !(await deps.store.workflows.get(caller.accountId, r.workflowId))) throw invalid(`workflow_id: no workflow ${r.workflowId ?? '(none given)'} in this account`);
        const on = r.events?.length ? [...new Set(r.events)] : ['completed'];
        const unknown = on.find((e) => !TRIGGER_EVENTS.includes(e as TriggerEvent));
        if (unknown !== undefined) throw invalid(`on: ${JSON.stringify(unknown)} is not one of ${TRIGGER_EVENTS.join(', ')}`);
        events = on as TriggerEvent[];
      } else if (r.workflowId !== undefined || r.events !== undefined) throw invalid('workflow_id and on belong to workflow triggers');
      const secret = r.kind === 'webhook' ? newSecret() : null;
      const row = {
        accountId: caller.accountId,
        id: randomUUID(),
        agentId,
        ownerId: caller.principalId,
        kind: r.kind,
        message: r.message,
        contextId: r.contextId ?? null,
        originTaskId: r.originTaskId ?? null,
        workflowId: r.kind === 'workflow' ? r.workflowId! : null,
        events,
        sealedSecret: secret ? deps.sealer.seal(secret) : null,
        caller: callerSnapshot(caller),
        createdAt: iso(deps.now()),
      };
      // The count and the row in one transaction with the account's row held: two makers never both pass the limit.
      await deps.store.tx(async (tx) => {
        if (!(await tx.agents.get(caller.accountId, agentId))) throw new PlatformError('MGMT_AGENT_NOT_FOUND', `no agent ${agentId} in this account`);
        await tx.accounts.lock(caller.accountId);
        const n = await tx.triggers.counts(caller.accountId, agentId);
        if (n.agent >= TRIGGER_LIMITS.perAgent) throw new PlatformError('TRIGGER_LIMIT', `this agent has ${TRIGGER_LIMITS.perAgent} triggers already: delete one first`);
        if (n.account >= TRIGGER_LIMITS.perAccount) throw new PlatformError('TRIGGER_LIMIT', `this account has ${TRIGGER_LIMITS.perAccount} triggers already: delete one first`);
        await tx.triggers.create(row);
      });
      const trigger = (await deps.store.triggers.get(caller.accountId, row.id))!;
      return { trigger, url: await urlOf(trigger), secret };
    },

    get: found,
    /** The caller's triggers (admins and owners: everyone's, unless `own`), newest first. */
    list: (c: Caller, q: { agentId?: string; own?: boolean; limit: number; before?: { createdAt: string; id: string } }) =>
      deps.store.triggers.list(c.accountId, { agentId: q.agentId, limit: q.limit, before: q.before, ...(hasAuthority(c.role, 'write') && !q.own ? {} : { ownerId: c.principalId }) }),

    /** Deletes a trigger (its maker, or an admin or owner): nothing starts from it again. */
    async remove(c: Caller, id: string): Promise<void> {
      if (!hasAuthority(c.role, 'execute')) throw new PlatformError('MGMT_FORBIDDEN', `forbidden: the ${c.role} role lacks execute authority`);
      await found(c, id);
      await deps.store.triggers.remove(c.accountId, id);
    },

    /** A new signing secret for a webhook trigger; the old one stops verifying at once. */
    async rotateSecret(c: Caller, id: string): Promise<{ trigger: TriggerRow; secret: string }> {
      if (!hasAuthority(c.role, 'execute')) throw new PlatformError('MGMT_FORBIDDEN', `forbidden: the ${c.role} role lacks execute authority`);
      const t = await found(c, id);
      if (t.kind !== 'webhook') throw invalid(`trigger ${id} is a workflow trigger: it has no signing secret`);
      const secret = newSecret();
      await deps.store.triggers.setSecret(c.accountId, id, deps.sealer.seal(secret));
      return { trigger: t, secret };
    },

    /**
     * One webhook delivery to `POST {agent_url}/triggers/{id}`: the trigger of this agent, a timestamp within the
     * tolerance, the signature over it and the raw body; then the run starts, its task id derived from the signature.
     */
    async deliver(d: Delivery): Promise<{ taskId: string }> {
      const t = /^[0-9a-f-]{36}$/.test(d.triggerId) ? await deps.store.triggers.get(d.accountId, d.triggerId) : null;
      if (!t || t.agentId !== d.agentId || t.kind !== 'webhook' || !t.sealedSecret) throw new PlatformError('TRIGGER_NOT_FOUND', `no webhook trigger ${d.triggerId} on this agent`);
      if (!d.timestamp || !/^\d{1,12}$/.test(d.timestamp)) throw badSignature(`the ${TRIGGER_HEADERS.timestamp} header (the delivery's time, in Unix seconds) is missing or not a number`);
      const skew = Math.abs(deps.now() / 1000 - Number(d.timestamp));
      if (skew > TRIGGER_LIMITS.toleranceSeconds) throw badSignature(`the delivery's timestamp is ${Math.round(skew)} s from now: at most ${TRIGGER_LIMITS.toleranceSeconds} s either way (a replay, or a clock that is off)`);
      const given = /^sha256=([0-9a-f]{64})$/i.exec(d.signature?.trim() ?? '')?.[1]?.toLowerCase();
      if (!given) throw badSignature(`the ${TRIGGER_HEADERS.signature} header must be sha256=<hex HMAC-SHA256 of "{timestamp}.{body}">`);
      const expected = triggerSignature(deps.sealer.open<string>(t.sealedSecret), d.timestamp, d.body);
      if (!timingSafeEqual(Buffer.from(given, 'hex'), Buffer.from(expected, 'hex'))) throw badSignature('the signature does not match the body and timestamp under this trigger\'s secret');
      const taskId = `trigger-${t.id}-${createHash('sha256').update(expected).digest('hex').slice(0, 32)}`;
      const payload = await d.payload();
      const r = await fire(t, taskId, [{ text: t.message }, typeof payload === 'string' ? { text: payload } : { data: payload }]);
      if (!r.ok) throw new PlatformError(r.gone ? 'TRIGGER_REFUSED' : r.transient ? 'TRIGGER_FAILED' : 'TRIGGER_DELIVERY_INVALID', r.error);
      if (r.existed) throw new PlatformError('TRIGGER_REPLAYED', `this delivery was received before: it started task ${taskId}`);
      return { taskId };
    },

    /**
     * A workflow run ended: every trigger waiting for that status starts a run, one task per trigger and run however
     * often this is called. A trigger sees the runs of its maker only, unless its maker may see every run (admins).
     */
    async workflowEnded(e: WorkflowEnded, signal?: AbortSignal): Promise<{ started: number }> {
      let started = 0;
      for (const t of await deps.store.triggers.ofWorkflow(e.accountId, e.workflowId)) {
        if (!t.events?.includes(e.status as TriggerEvent)) continue;
        if (t.ownerId !== e.ownerId && !(await seesEveryRun(t))) continue;
        const data = { workflow_id: e.workflowId, run_id: e.runId, status: e.status, output: e.output ?? null, error: e.error };
        // A start that failed for a passing reason (the account's lane full) is tried again, a few times, before the
        // run's end is left behind; the task id makes a repeated start harmless.
        for (let attempt = 0; attempt < TRIGGER_RETRIES && !signal?.aborted; attempt++) {
          let r: Awaited<ReturnType<typeof fire>> | null = null;
          try {
            r = await fire(t, `trigger-${t.id}-${e.runId}`, [{ text: t.message }, { data }], signal);
          } catch (err) {
            await deps.store.triggers.fired(t.accountId, t.id, { taskId: null, at: iso(deps.now()), error: `the run could not start: ${err instanceof Error ? err.message : String(err)}` }).catch(() => {});
          }
          if (r?.ok && !r.existed) started++;
          if (r && (r.ok || !r.transient)) break;
          await sleep(500 * 2 ** attempt, undefined, signal ? { signal } : {}).catch(() => {});
        }
      }
      return { started };
    },
  };
}

export type Triggers = ReturnType<typeof createTriggers>;
