import { createActor, type AnyActorRef } from 'xstate';
import { StoreConflictError, type Fence, type Repositories, type Store } from '../../../store/index.ts';
import { systemClock, type Clock } from '../clock/index.ts';
import type { Bus, Unsubscribe } from '../bus/index.ts';
import { PlatformError } from '../errors/index.ts';
import { SUBJECTS } from '../subjects/index.ts';
import { parseAddress, shardOf } from './address.ts';
import type { ActorSystem } from './actor-system.ts';
import type { ActorEvent, ActorKind, ActorState, TurnResult } from './kinds.ts';
import { createTimerService, type TimerService } from './durable-timers.ts';
import type { Transition } from './inspection.ts';
import { activeEffects, prepareKinds, type PreparedKind as Kind } from './effect-logic.ts';
import { createEffectRunner, type EffectObserver, type EffectRecord, type EffectRun } from './effect-runs.ts';
import { planTurn, stateOf } from './turn-plan.ts';
import { createMailboxes } from './mailbox.ts';
import { createOutbox } from './outbox.ts';


export interface ActorHostOptions {
  store: Pick<Store, 'snapshots' | 'timers' | 'effects' | 'outbox' | 'tx'>;
  kinds: ActorKind[];
  clock?: Clock;
  /** Publishes what actors emit, their effects' progress and, while watched, their transitions. */
  bus?: Bus;
  /** Passivate an actor after this long without a turn (never while one of its effects runs). */
  idleMs?: number;
  /** The fence for writes of this address: its shard and the lease revision this node holds (null on a single node). */
  fenceOf?: (address: string) => Fence | null;
  /** Whether this node owns `address` now: fires its timers, resumes its effects, delivers its messages. */
  owns?: (address: string) => boolean;
  /** The shards this node owns (null: all of them, a single node). */
  ownedShards?: () => number[] | null;
  /** Runs an effect in its account's lane (the default runs it at once). */
  runInLane?: <T>(accountId: string, cost: number, job: () => Promise<T>) => Promise<T>;
  timerPollMs?: number;
  /** How often unfinished effects and undelivered messages of owned shards are looked for. */
  sweepMs?: number;
  onError?: (err: unknown, context: string) => void;
  /** Told of every effect run (the node's metrics). */
  effectObserver?: EffectObserver;
}

export interface ActorHost extends ActorSystem {
  /** Streams the transitions of one actor hosted here (the statechart viewer). */
  inspect(address: string, listener: (t: Transition) => void): Unsubscribe;
  readonly timers: TimerService;
  /** Messages between actors go out through this system (the shard router in a cluster; the host by default). */
  bindSystem(system: ActorSystem): void;
  /** Resumes the unfinished effects and undelivered messages of the shards this node owns. */
  resume(): Promise<void>;
  activeCount(): number;
  /** Active actors per kind, every kind listed (0 when none is active): kept as actors come and go. */
  activeByKind(): ReadonlyMap<string, number>;
  /** Persisted already after every turn, so passivation drops the in-memory actor and stops its effects here. */
  passivateAll(): Promise<void>;
  /** Passivates the active actors whose address matches, each after the turns already in its mailbox. */
  passivateWhere(match: (address: string) => boolean): Promise<void>;
  stop(): Promise<void>;
}

interface Turn {
  emitted: ({ type: string } & Record<string, unknown>)[];
  started: Set<string>;
}

interface Entry {
  address: string;
  accountId: string;
  shard: number;
  kind: Kind;
  actor: AnyActorRef;
  version: number;
  json: string;
  seq: number;
  state: ActorState | null;
  armed: Map<string, number>;
  /** Effects recorded in the store for this actor: what a commit diffs the snapshot's running effects against. */
  recorded: Map<string, { name: string; key: string; input: unknown }>;
  running: Map<string, EffectRun>;
  turn: Turn | null;
  /** Effects announced while the actor was being restored (not in a turn): they are resumed, not started. */
  resumed: string[];
  idle: unknown;
  /** When the actor counts as idle, unless touched again before (see touch). */
  idleAt: number;
  failure: unknown;
}


export function createActorHost(opts: ActorHostOptions): ActorHost {
  const clock = opts.clock ?? systemClock;
  const idleMs = opts.idleMs ?? 120_000;
  const fenceOf = opts.fenceOf ?? (() => null);
  const owns = opts.owns ?? (() => true);
  const onError = opts.onError ?? (() => {});
  const runInLane = opts.runInLane ?? ((_a, _c, job) => job());
  const active = new Map<string, Entry>();
  const perKind = new Map<string, number>(opts.kinds.map((k) => [k.kind, 0]));
  /** `active` changes only through `admit` and `deactivate`, so the per-kind counts follow it exactly. */
  const admit = (entry: Entry) => {
    const previous = active.get(entry.address);
    if (previous) perKind.set(previous.kind.kind, perKind.get(previous.kind.kind)! - 1);
    active.set(entry.address, entry);
    perKind.set(entry.kind.kind, (perKind.get(entry.kind.kind) ?? 0) + 1);
  };
  const bySystem = new WeakMap<object, Entry>();
  const mailboxes = createMailboxes();
  const listeners = new Map<string, Set<(t: Transition) => void>>();
  const watched = new Map<string, number>();
  let system: ActorSystem | null = null;

  const kinds = prepareKinds(opts.kinds, {
    started(sys, effectId) {
      const entry = bySystem.get(sys);
      if (!entry) return;
      if (entry.turn) entry.turn.started.add(effectId);
      else entry.resumed.push(effectId);
    },
    // A child stopped in a turn needs nothing here: the commit diffs what runs against what was recorded.
    stopped() {},
  });

  const outbox = createOutbox({ outbox: opts.store.outbox, system: () => system ?? host, onError });

  function kindOf(address: string): Kind {
    const k = kinds.get(parseAddress(address).kind);
    if (!k) throw new PlatformError('PLT_ACTOR_UNKNOWN_KIND', `no actor kind ${JSON.stringify(parseAddress(address).kind)}`);
    return k;
  }

  function start(address: string, kind: Kind, options: { snapshot?: unknown; input?: unknown }, version: number, seq: number): Entry {
    const actor = createActor(kind.logic, options as never);
    const entry: Entry = {
      address,
      accountId: parseAddress(address).accountId,
      shard: shardOf(address),
      kind,
      actor,
      version,
      json: '',
      seq,
      state: null,
      armed: new Map(),
      recorded: new Map(),
      running: new Map(),
      turn: null,
      resumed: [],
      idle: undefined,
      idleAt: 0,
      failure: undefined,
    };
    bySystem.set(actor.system, entry);
    // Without an error observer XState rethrows a failing action asynchronously, which would end the process.
    actor.subscribe({ error: (err) => (entry.failure = err) });
    actor.on('*', (e: { type: string }) => entry.turn?.emitted.push(e as Turn['emitted'][number]));
    return entry;
  }

  async function activate(address: string): Promise<Entry | null> {
    const existing = active.get(address);
    if (existing) return existing;
    const kind = kindOf(address);
    const stored = await opts.store.snapshots.load(address);
    if (!stored) return null;
    const entry = start(address, kind, { snapshot: stored.snapshot }, stored.version, stored.eventSeq);
    entry.json = JSON.stringify(stored.snapshot);
    entry.state = stateOf(stored.snapshot as Record<string, unknown>, stored.eventSeq);
    if (kind.timers) for (const t of await opts.store.timers.listFor(address)) entry.armed.set(t.key, t.fireAt);
    if (activeEffects(stored.snapshot as Record<string, unknown>, kind.effectNames).size) {
      for (const r of await opts.store.effects.forAddress(address)) entry.recorded.set(r.effectId, { name: r.name, key: r.key, input: r.input });
    }
    entry.actor.start();
    admit(entry);
    const resumed = entry.resumed.splice(0);
    for (const id of resumed) await resumeRun(entry, id);
    return entry;
  }

  async function resumeRun(entry: Entry, effectId: string) {
    const rec = entry.recorded.get(effectId);
    if (!rec || entry.running.has(effectId)) return;
    const attempt = await opts.store.effects.retry(entry.address, effectId);
    run(entry, effectId, rec, Math.max(attempt, 1));
  }

  /** Drops the in-memory actor; its effects stop running here (the next owner or activation resumes them). */
  function deactivate(entry: Entry) {
    clock.clearTimeout(entry.idle);
    for (const r of entry.running.values()) r.controller.abort(new PlatformError('PLT_ACTOR_HOST_STOPPED', 'the actor stopped running on this node'));
    entry.running.clear();
    entry.actor.stop();
    if (active.get(entry.address) === entry) {
      active.delete(entry.address);
      perKind.set(entry.kind.kind, perKind.get(entry.kind.kind)! - 1);
    }
  }

  /**
   * Marks the actor used now: it is passivated once it has been idle for idleMs. A busy actor is touched thousands of
   * times a second, so a touch only moves the deadline; the one timer, when it fires early, waits out the rest.
   */
  function touch(entry: Entry) {
    entry.idleAt = clock.now() + idleMs;
    if (entry.idle === undefined) armIdle(entry, idleMs);
  }

  function armIdle(entry: Entry, ms: number) {
    entry.idle = clock.setTimeout(
      () =>
        mailboxes
          .enqueue(entry.address, async () => {
            entry.idle = undefined;
            if (active.get(entry.address) !== entry) return;
            const left = entry.idleAt - clock.now();
            if (left > 0) armIdle(entry, left);
            // An actor whose effect runs is not idle: it is waiting for the outcome.
            else if (entry.running.size > 0) touch(entry);
            else deactivate(entry);
          })
          .catch(() => {}),
      ms,
    );
  }

  const runEffect = createEffectRunner({
    runInLane,
    bus: opts.bus,
    clock,
    deliver: (address, effectId, key, outcome) => deliver(address, effectId, key, outcome),
    ...(opts.effectObserver ? { observer: opts.effectObserver } : {}),
  });
  const run = (entry: Entry, effectId: string, rec: EffectRecord, attempt: number) =>
    runEffect(entry, entry.kind.effects[rec.name]!, entry.kind.costs[rec.name] ?? 1, effectId, rec, attempt);

  /** An effect's outcome, as a new turn; dropped when the effect was cancelled, restarted or moved meanwhile. */
  function deliver(address: string, effectId: string, key: string, outcome: { type: string } & Record<string, unknown>) {
    return mailboxes
      .enqueue(address, async () => {
        const entry = active.get(address);
        if (!entry || entry.running.get(effectId)?.key !== key) return;
        entry.running.delete(effectId);
        const child = (entry.actor.getSnapshot().children as Record<string, AnyActorRef | undefined>)[effectId];
        if (!child) return;
        entry.turn = { emitted: [], started: new Set() };
        child.send(outcome);
        try {
          await commit(entry, { type: `${outcome.type}:${effectId}` });
        } catch (err) {
          // Another node owns the actor now: it runs the effect again and lands that outcome instead.
          if (!(err instanceof StoreConflictError)) throw err;
          deactivate(entry);
        }
      })
      .catch((err) => onError(err, `outcome of effect ${effectId} of ${address}`));
  }

  function publishTransition(entry: Entry, event: { type: string }, state: ActorState) {
    const local = listeners.get(entry.address);
    const until = watched.get(entry.address);
    if (!local?.size && !(until && until > clock.now())) return;
    const t: Transition = { address: entry.address, event, value: state.value, status: state.status, context: state.context, version: entry.version, at: clock.now() };
    for (const l of local ?? []) l(t);
    if (until && until > clock.now()) opts.bus?.publish(SUBJECTS.inspectTransition(entry.address), t);
  }

  /** Persists what a turn did in one statement (or one transaction with the kind's projection), then acts on it. */
  async function commit(entry: Entry, event: { type: string }): Promise<TurnResult> {
    const turn = entry.turn ?? { emitted: [], started: new Set<string>() };
    entry.turn = null;
    if (entry.failure !== undefined || entry.actor.getSnapshot().status === 'error') {
      deactivate(entry);
      throw new PlatformError('PLT_ACTOR_FAILED', `actor ${entry.address} failed handling ${event.type}`, { cause: entry.failure });
    }
    const persisted = entry.actor.getPersistedSnapshot() as Record<string, unknown>;
    const plan = planTurn({ ...entry, kind: entry.kind.kind, effectNames: entry.kind.effectNames, timers: entry.kind.timers }, persisted, turn.emitted, turn.started, fenceOf(entry.address));
    if (!plan.commit) {
      publishTransition(entry, event, plan.state);
      touch(entry);
      return { ...plan.state, events: [], replies: plan.replies };
    }
    // The sequence the commit will give the turn's last event: it succeeds only from the version (and so the
    // sequence) this entry holds.
    const seqAfter = { ...plan.state, seq: entry.seq + plan.journal.length };
    const change = { address: entry.address, state: plan.done ? null : seqAfter, previous: entry.state, after: seqAfter };
    const rows = entry.kind.projectRows?.(change);
    const read = entry.kind.readWithTurn?.(change) ?? null;
    const c = { ...plan.commit, ...(rows ? { rows } : {}), ...(read ? { read } : {}) };
    const project = entry.kind.project;
    const result = project
      ? await opts.store.tx(async (tx: Repositories) => {
          const r = await tx.snapshots.commit(c);
          await project(tx, { address: entry.address, state: plan.done ? null : { ...plan.state, seq: r.eventSeq }, previous: entry.state, after: { ...plan.state, seq: r.eventSeq } });
          return r;
        })
      : await opts.store.snapshots.commit(c);
    entry.version = result.version;
    entry.json = plan.json;
    entry.seq = result.eventSeq;
    const previous = entry.state;
    const after: ActorState = { ...plan.state, seq: result.eventSeq };
    entry.state = after;
    for (const id of plan.finished) {
      entry.recorded.delete(id);
      entry.running.get(id)?.controller.abort(new PlatformError('PLT_ACTOR_HOST_STOPPED', 'the state that started this effect was left'));
      entry.running.delete(id);
    }
    for (const t of plan.arm) entry.armed.set(t.key, t.fireAt);
    for (const k of plan.cancel) entry.armed.delete(k);
    if (plan.arm.length) timers.notify(Math.min(...plan.arm.map((t) => t.fireAt)));
    const events: ActorEvent[] = plan.journal.map((e, i) => ({ seq: result.eventSeq - plan.journal.length + 1 + i, event: e }));
    for (const e of events) opts.bus?.publish(SUBJECTS.actorEvents(entry.address), { address: entry.address, seq: e.seq, event: e.event, at: clock.now() });
    if (result.outboxIds.length) outbox.send(result.outboxIds.map((id, i) => ({ id, address: entry.address, target: plan.tells[i]!.to, event: plan.tells[i]!.event })));
    if (plan.done) deactivate(entry);
    else {
      for (const s of plan.started) {
        const previous = entry.running.get(s.effectId);
        // Left and entered again in one turn: the old run is cancelled, a new one starts with a new key.
        if (previous) previous.controller.abort(new PlatformError('PLT_ACTOR_HOST_STOPPED', 'the effect was started again'));
        entry.recorded.set(s.effectId, { name: s.name, key: s.key, input: s.input });
        run(entry, s.effectId, s, 1);
      }
      touch(entry);
    }
    publishTransition(entry, event, after);
    if (entry.kind.afterTurn) {
      try {
        entry.kind.afterTurn({ address: entry.address, state: plan.done ? null : after, previous, after }, result.read);
      } catch (err) {
        onError(err, `afterTurn of ${entry.address}`);
      }
    }
    return { ...after, events, replies: plan.replies };
  }

  async function turn(address: string, event: { type: string }, retried = false): Promise<TurnResult> {
    const entry = await activate(address);
    if (!entry) throw new PlatformError('PLT_ACTOR_NOT_FOUND', `no actor at ${address}`);
    entry.turn = { emitted: [], started: new Set() };
    entry.actor.send(event);
    try {
      return await commit(entry, event);
    } catch (err) {
      if (!(err instanceof StoreConflictError)) throw err;
      // Someone else wrote this actor since we loaded it: our copy is stale. Reload and replay the event once.
      deactivate(entry);
      if (retried) throw new PlatformError('PLT_ACTOR_CONFLICT', `concurrent writers on ${address}`, { cause: err });
      return turn(address, event, true);
    }
  }

  const timers = createTimerService({
    timers: opts.store.timers,
    clock,
    pollMs: opts.timerPollMs ?? 5_000,
    owns,
    deliver: (address, key, event) =>
      mailboxes
        .enqueue(address, async () => {
          // The row is gone (claimed): the state after this turn arms it again if it still wants it.
          active.get(address)?.armed.delete(key);
          return turn(address, event);
        })
        .then(() => {}),
    onError,
  });

  let sweeping: Promise<void> | null = null;
  async function sweep() {
    const shards = opts.ownedShards?.() ?? null;
    if (shards && shards.length === 0) return;
    for (const address of await opts.store.effects.addresses(shards)) {
      if (!owns(address)) continue;
      void mailboxes
        .enqueue(address, async () => {
          const entry = active.get(address) ?? (await activate(address));
          if (entry) for (const id of entry.recorded.keys()) await resumeRun(entry, id);
        })
        .catch((err) => onError(err, `resuming the effects of ${address}`));
    }
    const pending = (await opts.store.outbox.pending(shards)).filter((m) => owns(m.address));
    outbox.send(pending as Parameters<typeof outbox.send>[0]);
  }
  const resume = () => (sweeping ??= sweep().catch((err) => onError(err, 'effects sweep')).finally(() => (sweeping = null)));
  const sweepTimer = setInterval(() => void resume(), opts.sweepMs ?? 30_000);
  sweepTimer.unref();

  const unwatch = opts.bus?.subscribe(SUBJECTS.inspectWatch, (data) => {
    const d = data as { address?: unknown; ttlMs?: unknown };
    if (typeof d.address === 'string' && typeof d.ttlMs === 'number') watched.set(d.address, clock.now() + Math.min(d.ttlMs, 300_000));
  });

  async function passivateWhere(match: (address: string) => boolean) {
    const addresses = [...new Set([...active.keys(), ...mailboxes.busy()])].filter(match);
    await Promise.all(
      addresses.map((a) =>
        mailboxes
          .enqueue(a, async () => {
            const e = active.get(a);
            if (e) deactivate(e);
          })
          .catch(() => {}),
      ),
    );
  }

  const host: ActorHost = {
    timers,
    create: (address, input) =>
      mailboxes.enqueue(address, async () => {
        const kind = kindOf(address);
        if (active.has(address)) throw new PlatformError('PLT_ACTOR_EXISTS', `an actor already lives at ${address}`);
        // One stored elsewhere is found by the commit itself (its insert conflicts): no read first.
        const entry = start(address, kind, { input }, 0, 0);
        entry.turn = { emitted: [], started: new Set() };
        entry.actor.start();
        admit(entry);
        try {
          return await commit(entry, { type: 'xstate.init' });
        } catch (err) {
          deactivate(entry);
          if (err instanceof StoreConflictError) throw new PlatformError('PLT_ACTOR_EXISTS', `an actor already lives at ${address}`);
          throw err;
        }
      }),
    ask: (address, event) => mailboxes.enqueue(address, () => turn(address, event)),
    read: (address) => {
      // The state of the last commit is what a read answers: kept since that commit (or the activation, or the
      // creation's commit, both before any read gets a turn), so a read costs no snapshot of the machine. It is
      // shared, like the state listeners get: callers must not change it.
      const answer = (entry: Entry) => {
        touch(entry);
        return entry.state;
      };
      // An active actor with nothing queued: its last commit is the answer the mailbox would give, given now.
      const idle = active.get(address);
      if (idle && mailboxes.idle(address)) return Promise.resolve(answer(idle));
      return mailboxes.enqueue(address, async () => {
        const entry = await activate(address);
        return entry ? answer(entry) : null;
      });
    },
    inspect(address, listener) {
      let set = listeners.get(address);
      if (!set) listeners.set(address, (set = new Set()));
      set.add(listener);
      return () => {
        set.delete(listener);
        if (set.size === 0) listeners.delete(address);
      };
    },
    bindSystem(s) {
      system = s;
    },
    resume,
    activeCount: () => active.size,
    activeByKind: () => perKind,
    passivateAll: () => passivateWhere(() => true),
    passivateWhere,
    async stop() {
      timers.stop();
      clearInterval(sweepTimer);
      unwatch?.();
      await passivateWhere(() => true);
      await mailboxes.drain();
      mailboxes.stop();
    },
  };
  return host;
}
