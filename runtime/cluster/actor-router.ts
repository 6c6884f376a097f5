import { setTimeout as sleep } from 'node:timers/promises';
import { ActorError, ActorErrorCode, isActorError, shardOf, type ActorHost, type ActorState } from '../actor-host/index.ts';
import type { ActorSystem } from '../actor-system.ts';
import { BusError, DeclineRequest, type Bus, type Unsubscribe } from '../bus/index.ts';

/** A shard with no owner, or in handoff: the caller retries until its deadline. */
export const SHARD_MOVING = 'PLT_SHARD_MOVING';

export const shardSubject = (shard: number) => `actor.shard.${shard}`;

type Op =
  | { op: 'create'; address: string; input: unknown }
  | { op: 'ask'; address: string; event: { type: string } & Record<string, unknown> }
  | { op: 'read'; address: string };

export interface RouterOptions {
  bus: Bus;
  /** The local host, when this process hosts shards (a CLI process only routes). */
  host?: ActorHost;
  owns?: (shard: number) => boolean;
  /** The shard's lease is still held here while it is handed off (no other node can have applied a request). */
  handingOff?: (shard: number) => boolean;
  /** How long a call waits for an owner (buffered and retried meanwhile). */
  deadlineMs?: number;
  /** How long one attempt waits for the owner's answer. */
  attemptTimeoutMs?: number;
}

function run(host: ActorHost, req: Op): Promise<ActorState | null> {
  if (req.op === 'create') return host.create(req.address, req.input);
  if (req.op === 'ask') return host.ask(req.address, req.event);
  return host.read(req.address);
}

/**
 * The cluster's ActorSystem: a call goes to the node owning the address's shard, over the bus, or runs here when
 * this node owns it. While a shard has no owner or is being handed off, calls are buffered and retried with backoff
 * until the deadline, then fail with PLT_ACTOR_UNAVAILABLE. A request whose answer was lost in transit (timeout) is
 * not retried blindly, since it may have been applied: it fails with the same retryable error.
 */
export function createActorRouter(opts: RouterOptions): ActorSystem & { serveShard(shard: number): Unsubscribe } {
  const deadlineMs = opts.deadlineMs ?? 10_000;
  const attemptMs = opts.attemptTimeoutMs ?? 5_000;
  const owns = opts.owns ?? (() => false);

  async function call(req: Op): Promise<ActorState | null> {
    const shard = shardOf(req.address);
    const deadline = Date.now() + deadlineMs;
    for (let attempt = 0; ; attempt++) {
      try {
        if (opts.host && owns(shard)) return await local(shard, req);
        return (await opts.bus.request(shardSubject(shard), req, { timeoutMs: Math.max(1, Math.min(attemptMs, deadline - Date.now())) })) as ActorState | null;
      } catch (err) {
        const moving = (err instanceof BusError && err.code === 'BUS_NO_RESPONDERS') || (err as { code?: string }).code === SHARD_MOVING;
        if (!moving) {
          if (err instanceof BusError && err.code === 'BUS_TIMEOUT') throw new ActorError(ActorErrorCode.Unavailable, `no answer from the owner of ${req.address} in time; retry later`);
          if (err instanceof BusError && isActorError(err)) throw new ActorError(err.code as ActorErrorCode, err.message);
          throw err;
        }
        if (Date.now() >= deadline) throw new ActorError(ActorErrorCode.Unavailable, `shard ${shard} has no owner right now; retry later`);
        await sleep(Math.min(250, 10 * 2 ** Math.min(attempt, 5)));
      }
    }
  }

  async function local(shard: number, req: Op): Promise<ActorState | null> {
    try {
      return await run(opts.host!, req);
    } catch (err) {
      // A fenced write means a newer owner exists: this node lost the shard; let the caller find the new owner.
      if (isActorError(err, 'PLT_ACTOR_CONFLICT') && !owns(shard)) throw Object.assign(new Error('shard moved'), { code: SHARD_MOVING });
      throw err;
    }
  }

  return {
    create: (address, input) => call({ op: 'create', address, input }) as Promise<ActorState>,
    ask: (address, event) => call({ op: 'ask', address, event }) as Promise<ActorState>,
    read: (address) => call({ op: 'read', address }),
    serveShard(shard) {
      return opts.bus.respond(shardSubject(shard), async (data) => {
        const req = data as Op;
        // Handing the shard off: this node still holds the lease, so no node has applied the request; telling the
        // caller to retry is safe, and spares it waiting out its timeout.
        if (opts.handingOff?.(shard)) throw Object.assign(new Error(`shard ${shard} is being handed off`), { code: SHARD_MOVING });
        // Not (or no longer) the owner: stay silent, so the rightful owner's answer is the only one the caller sees.
        if (!opts.host || !owns(shard) || shardOf(req.address) !== shard) throw new DeclineRequest(`shard ${shard} is not served here`);
        try {
          return await local(shard, req);
        } catch (err) {
          if ((err as { code?: string }).code === SHARD_MOVING) throw new DeclineRequest(`shard ${shard} moved`);
          throw err;
        }
      });
    },
  };
}
