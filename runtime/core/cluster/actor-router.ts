import { setTimeout as sleep } from 'node:timers/promises';
import { shardOf, type ActorHost, type ActorState, type ActorSystem, type TurnResult } from '../actor-host/index.ts';
import { isPlatformError, PlatformError } from '../errors/index.ts';
import { DeclineRequest, type Bus, type Unsubscribe } from '../bus/index.ts';
import { SUBJECTS } from '../subjects/index.ts';


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

function run(host: ActorHost, req: Op): Promise<TurnResult | ActorState | null> {
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
        return (await opts.bus.request(SUBJECTS.shard(shard), req, { timeoutMs: Math.max(1, Math.min(attemptMs, deadline - Date.now())) })) as ActorState | null;
      } catch (err) {
        const moving = isPlatformError(err, 'BUS_NO_RESPONDERS') || isPlatformError(err, 'PLT_SHARD_MOVING');
        if (!moving) {
          if (isPlatformError(err, 'BUS_TIMEOUT')) throw new PlatformError('PLT_ACTOR_UNAVAILABLE', `no answer from the owner of ${req.address} in time; retry later`);
          throw err;
        }
        if (Date.now() >= deadline) throw new PlatformError('PLT_ACTOR_UNAVAILABLE', `shard ${shard} has no owner right now; retry later`);
        await sleep(Math.min(250, 10 * 2 ** Math.min(attempt, 5)));
      }
    }
  }

  async function local(shard: number, req: Op): Promise<TurnResult | ActorState | null> {
    try {
      return await run(opts.host!, req);
    } catch (err) {
      // A fenced write means a newer owner exists: this node lost the shard; let the caller find the new owner.
      if (isPlatformError(err, 'PLT_ACTOR_CONFLICT') && !owns(shard)) throw new PlatformError('PLT_SHARD_MOVING', 'shard moved');
      throw err;
    }
  }

  return {
    create: (address, input) => call({ op: 'create', address, input }) as Promise<TurnResult>,
    ask: (address, event) => call({ op: 'ask', address, event }) as Promise<TurnResult>,
    read: (address) => call({ op: 'read', address }),
    serveShard(shard) {
      return opts.bus.respond(SUBJECTS.shard(shard), async (data) => {
        const req = data as Op;
        // Handing the shard off: this node still holds the lease, so no node has applied the request; telling the
        // caller to retry is safe, and spares it waiting out its timeout.
        if (opts.handingOff?.(shard)) throw new PlatformError('PLT_SHARD_MOVING', `shard ${shard} is being handed off`);
        // Not (or no longer) the owner: stay silent, so the rightful owner's answer is the only one the caller sees.
        if (!opts.host || !owns(shard) || shardOf(req.address) !== shard) throw new DeclineRequest(`shard ${shard} is not served here`);
        try {
          return await local(shard, req);
        } catch (err) {
          if (isPlatformError(err, 'PLT_SHARD_MOVING')) throw new DeclineRequest(`shard ${shard} moved`);
          throw err;
        }
      });
    },
  };
}
