import { createActor, type AnyActorRef } from 'xstate';
import type { Repositories } from '../../store/index.ts';
import { StoreConflictError, type Fence } from '../../store/index.ts';
import { systemClock, type Clock } from '../clock.ts';
import type { Bus, Unsubscribe } from '../bus/index.ts';
import { parseAddress } from './address.ts';
import { ActorError, ActorErrorCode } from './errors.ts';
import type { ActorKind, ActorState } from './kinds.ts';
import { createTimerService, type TimerService } from './durable-timers.ts';
import { INSPECT_WATCH_SUBJECT, transitionSubject, type Transition } from './inspection.ts';

export interface ActorHostOptions {
  store: Pick<Repositories, 'snapshots' | 'timers'>;
  kinds: ActorKind[];
  clock?: Clock;
  /** Carries inspection streams to viewers on any node. */
  bus?: Bus;
  /** Passivate an actor after this long without a turn. */
  idleMs?: number;
  /** The fence for writes of this address: its shard and the lease revision this node holds (null on a single node). */
  fenceOf?: (address: string) => Fence | null;
  /** Whether this node fires the durable timers of `address` (its shard owner does). */
  ownsTimersOf?: (address: string) => boolean;
  timerPollMs?: number;
  onError?: (err: unknown, context: string) => void;
}

export interface ActorHost {
  /** Creates and persists a new actor; fails with PLT_ACTOR_EXISTS if the address is taken. */
  create(address: string, input: unknown): Promise<ActorState>;
  /** Delivers one event as one turn and returns the state after it; PLT_ACTOR_NOT_FOUND if the actor does not exist. */
  ask(address: string, event: { type: string } & Record<string, unknown>): Promise<ActorState>;
  /** The current state without a turn, or null. */
  read(address: string): Promise<ActorState | null>;
  /** Streams the transitions of one actor hosted here. */
  inspect(address: string, listener: (t: Transition) => void): Unsubscribe;
  readonly timers: TimerService;
  activeCount(): number;
  /** Persisted already after every turn, so passivation only drops the in-memory actor. */
  passivateAll(): Promise<void>;
  /** Passivates the active actors whose address matches, each after the turns already in its mailbox. */
  passivateWhere(match: (address: string) => boolean): Promise<void>;
  stop(): Promise<void>;
}

interface Entry {
  address: string;
  kind: ActorKind;
  actor: AnyActorRef;
  version: number;
  json: string;
  armed: Map<string, number>;
  idle: unknown;
  failure: unknown;
}

const stateOf = (persisted: Record<string, unknown>): ActorState => ({
  status: persisted.status as ActorState['status'],
  value: persisted.value,
  context: persisted.context as Record<string, unknown>,
});

export function createActorHost(opts: ActorHostOptions): ActorHost {
  const clock = opts.clock ?? systemClock;
  const kinds = new Map(opts.kinds.map((k) => [k.kind, k]));
  const idleMs = opts.idleMs ?? 120_000;
  const fenceOf = opts.fenceOf ?? (() => null);
  const onError = opts.onError ?? (() => {});
  const active = new Map<string, Entry>();
  const mailboxes = new Map<string, Promise<unknown>>();
  const listeners = new Map<string, Set<(t: Transition) => void>>();
  const watched = new Map<string, number>();
  let stopped = false;

  /** One turn at a time per actor: every operation on an address runs after the previous one settled. */
  function enqueue<T>(address: string, fn: () => Promise<T>): Promise<T> {
    if (stopped) return Promise.reject(new ActorError(ActorErrorCode.Stopped, 'actor host is stopped'));
    const prev = mailboxes.get(address) ?? Promise.resolve();
    const next = prev.then(fn, fn);
    const tail = next.catch(() => {});
    mailboxes.set(address, tail);
    void tail.then(() => {
      if (mailboxes.get(address) === tail) mailboxes.delete(address);
    });
    return next;
  }

  function kindOf(address: string): ActorKind {
    const { kind } = parseAddress(address);
    const k = kinds.get(kind);
    if (!k) throw new ActorError(ActorErrorCode.UnknownKind, `no actor kind ${JSON.stringify(kind)}`);
    return k;
  }

  function start(address: string, kind: ActorKind, options: { snapshot?: unknown; input?: unknown }): Entry {
    const actor = createActor(kind.logic, options as never);
    const entry: Entry = { address, kind, actor, version: 0, json: '', armed: new Map(), idle: undefined, failure: undefined };
    // Without an error observer XState rethrows a failing action asynchronously, which would end the process.
    actor.subscribe({ error: (err) => (entry.failure = err) });
    actor.start();
    return entry;
  }

  async function activate(address: string): Promise<Entry | null> {
    const existing = active.get(address);
    if (existing) return existing;
    const kind = kindOf(address);
    const stored = await opts.store.snapshots.load(address);
    if (!stored) return null;
    const entry = start(address, kind, { snapshot: stored.snapshot });
    entry.version = stored.version;
    entry.json = JSON.stringify(stored.snapshot);
    for (const t of await opts.store.timers.listFor(address)) entry.armed.set(t.key, t.fireAt);
    active.set(address, entry);
    return entry;
  }

  function deactivate(entry: Entry) {
    clock.clearTimeout(entry.idle);
    entry.actor.stop();
    if (active.get(entry.address) === entry) active.delete(entry.address);
  }

  function touch(entry: Entry) {
    clock.clearTimeout(entry.idle);
    entry.idle = clock.setTimeout(
      () =>
        enqueue(entry.address, async () => {
          if (active.get(entry.address) === entry) deactivate(entry);
        }).catch(() => {}),
      idleMs,
    );
  }

  async function reconcileTimers(entry: Entry, state: ActorState) {
    const desired = new Map((entry.kind.timers?.(state) ?? []).map((t) => [t.key, t]));
    for (const key of [...entry.armed.keys()]) {
      if (!desired.has(key)) {
        await opts.store.timers.cancel(entry.address, key);
        entry.armed.delete(key);
      }
    }
    for (const t of desired.values()) {
      if (entry.armed.get(t.key) === t.at) continue;
      await opts.store.timers.arm({ address: entry.address, key: t.key, fireAt: t.at, event: t.event });
      entry.armed.set(t.key, t.at);
      timers.notify(t.at);
    }
  }

  function emit(entry: Entry, event: { type: string }, state: ActorState) {
    const local = listeners.get(entry.address);
    const until = watched.get(entry.address);
    if (!local?.size && !(until && until > clock.now())) return;
    const t: Transition = { address: entry.address, event, value: state.value, status: state.status, context: state.context, version: entry.version, at: clock.now() };
    for (const l of local ?? []) l(t);
    if (until && until > clock.now()) opts.bus?.publish(transitionSubject(entry.address), t);
  }

  /** Persists the state after a turn (fenced) and brings timers in line with it. */
  async function commit(entry: Entry, event: { type: string }): Promise<ActorState> {
    if (entry.failure !== undefined || entry.actor.getSnapshot().status === 'error') {
      deactivate(entry);
      throw new ActorError(ActorErrorCode.Failed, `actor ${entry.address} failed handling ${event.type}`, { cause: entry.failure });
    }
    const persisted = entry.actor.getPersistedSnapshot() as Record<string, unknown>;
    const state = stateOf(persisted);
    const json = JSON.stringify(persisted);
    const { accountId } = parseAddress(entry.address);
    if (state.status === 'done') {
      if (entry.version > 0) await opts.store.snapshots.remove(entry.address, entry.version, fenceOf(entry.address));
      await opts.store.timers.cancelAll(entry.address);
      entry.armed.clear();
      deactivate(entry);
      emit(entry, event, state);
      await entry.kind.onDone?.(entry.address, state);
      return state;
    }
    if (json !== entry.json) {
      entry.version = await opts.store.snapshots.save({
        address: entry.address,
        kind: entry.kind.kind,
        accountId,
        expectedVersion: entry.version,
        fence: fenceOf(entry.address),
        snapshot: persisted,
      });
      entry.json = json;
    }
    await reconcileTimers(entry, state);
    emit(entry, event, state);
    touch(entry);
    return state;
  }

  async function turn(address: string, event: { type: string }, retried = false): Promise<ActorState> {
    const entry = await activate(address);
    if (!entry) throw new ActorError(ActorErrorCode.NotFound, `no actor at ${address}`);
    entry.actor.send(event);
    try {
      return await commit(entry, event);
    } catch (err) {
      if (!(err instanceof StoreConflictError)) throw err;
      // Someone else wrote this actor since we loaded it: our copy is stale. Reload and replay the event once.
      deactivate(entry);
      if (retried) throw new ActorError(ActorErrorCode.Conflict, `concurrent writers on ${address}`, { cause: err });
      return turn(address, event, true);
    }
  }

  const timers = createTimerService({
    timers: opts.store.timers,
    clock,
    pollMs: opts.timerPollMs ?? 5_000,
    owns: opts.ownsTimersOf ?? (() => true),
    deliver: (address, event) => enqueue(address, () => turn(address, event)).then(() => {}),
    onError,
  });

  const unwatch = opts.bus?.subscribe(INSPECT_WATCH_SUBJECT, (data) => {
    const d = data as { address?: unknown; ttlMs?: unknown };
    if (typeof d.address === 'string' && typeof d.ttlMs === 'number') {
      watched.set(d.address, clock.now() + Math.min(d.ttlMs, 300_000));
    }
  });

  return {
    timers,
    create: (address, input) =>
      enqueue(address, async () => {
        const kind = kindOf(address);
        if (active.has(address) || (await opts.store.snapshots.load(address))) {
          throw new ActorError(ActorErrorCode.Exists, `an actor already lives at ${address}`);
        }
        const entry = start(address, kind, { input });
        active.set(address, entry);
        try {
          return await commit(entry, { type: 'xstate.init' });
        } catch (err) {
          deactivate(entry);
          if (err instanceof StoreConflictError) throw new ActorError(ActorErrorCode.Exists, `an actor already lives at ${address}`);
          throw err;
        }
      }),
    ask: (address, event) => enqueue(address, () => turn(address, event)),
    read: (address) =>
      enqueue(address, async () => {
        const entry = await activate(address);
        if (!entry) return null;
        touch(entry);
        return stateOf(entry.actor.getPersistedSnapshot() as Record<string, unknown>);
      }),
    inspect(address, listener) {
      let set = listeners.get(address);
      if (!set) listeners.set(address, (set = new Set()));
      set.add(listener);
      return () => {
        set.delete(listener);
        if (set.size === 0) listeners.delete(address);
      };
    },
    activeCount: () => active.size,
    passivateAll() {
      return this.passivateWhere(() => true);
    },
    async passivateWhere(match) {
      const addresses = [...new Set([...active.keys(), ...mailboxes.keys()])].filter(match);
      await Promise.all(
        addresses.map((a) =>
          enqueue(a, async () => {
            const e = active.get(a);
            if (e) deactivate(e);
          }).catch(() => {}),
        ),
      );
    },
    async stop() {
      timers.stop();
      unwatch?.();
      await this.passivateAll();
      await Promise.all([...mailboxes.values()]);
      stopped = true;
    },
  };
}
