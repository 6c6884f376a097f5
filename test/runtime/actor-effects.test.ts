import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assign, emit, setup } from 'xstate';
import { accountMachine, effect, tell } from '../../actors/index.ts';
import { createActorHost, createLocalBus, PlatformError, subscribeActor, type ActorHost, type ActorKind, type ActorStreamItem, type Bus, type EffectContext } from '../../runtime/index.ts';
import { freshStore, type DriverName } from '../helpers/store.ts';
import { mustRun } from '../helpers/env.ts';

type JobEvent = { type: 'START'; n: number } | { type: 'CANCEL' } | { type: 'PING'; to: string } | { type: 'PONG' };
interface JobContext {
  n: number;
  results: number[];
  errors: string[];
  pongs: number;
}

/** A machine with one effect (`work` doubles its input) and one message (PING makes the target PONG). */
const jobMachine = setup({
  types: { context: {} as JobContext, events: {} as JobEvent, emitted: {} as { type: 'job.done'; doubled: number } | { type: 'job.ponged' } },
  actors: { work: effect<{ n: number }, { doubled: number }>() },
}).createMachine({
  id: 'Job',
  initial: 'idle',
  context: { n: 0, results: [], errors: [], pongs: 0 },
  states: {
    idle: {
      on: {
        START: { target: 'working', actions: assign({ n: ({ event }) => event.n }) },
        PING: { actions: tell(({ event }) => event.to, () => ({ type: 'PONG' })) },
        PONG: { actions: [assign({ pongs: ({ context }) => context.pongs + 1 }), emit({ type: 'job.ponged' as const })] },
      },
    },
    working: {
      invoke: {
        id: 'work',
        src: 'work',
        input: ({ context }) => ({ n: context.n }),
        onDone: {
          target: 'idle',
          actions: [assign({ results: ({ context, event }) => [...context.results, event.output.doubled] }), emit(({ event }) => ({ type: 'job.done' as const, doubled: event.output.doubled }))],
        },
        onError: { target: 'idle', actions: assign({ errors: ({ context, event }) => [...context.errors, String((event.error as { message?: string }).message)] }) },
      },
      on: { CANCEL: 'idle' },
    },
  },
});

interface Call {
  input: { n: number };
  ctx: EffectContext;
  resolve(v: { doubled: number }): void;
  reject(e: unknown): void;
}

const drivers: DriverName[] = ['pglite', ...(mustRun('postgres') ? (['pg'] as const) : [])];
const until = async (check: () => Promise<boolean> | boolean, ms = 5_000) => {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
};

describe.each(drivers)('actor host v2 on %s: effects, events, messages, projections', (driver) => {
  let store: Awaited<ReturnType<typeof freshStore>>;
  let bus: Bus;
  let calls: Call[];
  let lanes: string[];
  let projected: { address: string; value: unknown }[];
  const hosts: ActorHost[] = [];
  const kinds = (): ActorKind[] => [
    {
      kind: 'job',
      logic: jobMachine,
      effects: {
        work: (input: { n: number }, ctx) => new Promise((resolve, reject) => calls.push({ input, ctx, resolve: resolve as Call['resolve'], reject })),
      },
      project: async (tx, c) => {
        // Written in the turn's transaction: a row the test reads back through the same store.
        await tx.settings.getOrCreate(`projection:${c.address}:${c.state?.seq ?? 'done'}:${Date.now()}:${Math.random()}`, String(c.state?.value ?? 'done'));
        projected.push({ address: c.address, value: c.state?.value ?? null });
      },
    },
    { kind: 'account', logic: accountMachine },
  ];
  const newHost = (extra: Partial<Parameters<typeof createActorHost>[0]> = {}) => {
    const h = createActorHost({ store, kinds: kinds(), bus, runInLane: (accountId, _cost, job) => (lanes.push(accountId), job()), sweepMs: 60_000, ...extra });
    hosts.push(h);
    return h;
  };

  beforeAll(async () => {
    store = await freshStore(driver);
    bus = createLocalBus();
  });
  afterEach(async () => {
    for (const h of hosts.splice(0)) await h.stop();
  });
  afterAll(async () => {
    await store.drop();
  });
  const reset = () => {
    calls = [];
    lanes = [];
    projected = [];
  };

  it('an effect runs in its account lane with an idempotency key; its outcome lands as a new turn and is journaled', async () => {
    reset();
    const host = newHost();
    const address = 'job/acc1/j1';
    await host.create(address, {});
    const started = await host.ask(address, { type: 'START', n: 21 });
    expect(started.value).toBe('working');
    await until(() => calls.length === 1);
    expect(calls[0]!.input).toEqual({ n: 21 });
    expect(calls[0]!.ctx).toMatchObject({ key: `${address}#work@2`, attempt: 1, address, accountId: 'acc1' });
    expect(lanes).toEqual(['acc1']);
    expect(await store.effects.forAddress(address)).toMatchObject([{ effectId: 'work', name: 'work', key: `${address}#work@2`, input: { n: 21 } }]);
    calls[0]!.resolve({ doubled: 42 });
    await until(async () => (await host.read(address))?.value === 'idle');
    expect((await host.read(address))?.context).toMatchObject({ results: [42] });
    expect(await store.effects.forAddress(address)).toEqual([]);
    expect((await store.actorEvents.after(address, 0)).map((e) => e.event)).toEqual([{ type: 'job.done', doubled: 42 }]);
  });

  it('an effect that outlives a restart runs again with the same key, and its result lands once', async () => {
    reset();
    const first = newHost();
    const address = 'job/acc2/j2';
    await first.create(address, {});
    await first.ask(address, { type: 'START', n: 5 });
    await until(() => calls.length === 1);
    const key = calls[0]!.ctx.key;
    await first.stop();
    // The node stopped running it: its signal fired, and whatever it answers now lands nowhere.
    expect(calls[0]!.ctx.signal.aborted).toBe(true);
    calls[0]!.resolve({ doubled: 999 });

    const second = newHost();
    await second.resume();
    await until(() => calls.length === 2);
    expect(calls[1]!.ctx).toMatchObject({ key, attempt: 2 });
    calls[1]!.resolve({ doubled: 10 });
    await until(async () => (await second.read(address))?.value === 'idle');
    await new Promise((r) => setTimeout(r, 50));
    expect((await second.read(address))?.context).toMatchObject({ results: [10] });
    expect((await store.actorEvents.after(address, 0)).map((e) => e.event)).toEqual([{ type: 'job.done', doubled: 10 }]);
  });

  it('leaving the state that started an effect aborts it; its late result is dropped; starting again uses a new key', async () => {
    reset();
    const host = newHost();
    const address = 'job/acc3/j3';
    await host.create(address, {});
    await host.ask(address, { type: 'START', n: 1 });
    await until(() => calls.length === 1);
    const cancelled = await host.ask(address, { type: 'CANCEL' });
    expect(cancelled.value).toBe('idle');
    expect(calls[0]!.ctx.signal.aborted).toBe(true);
    expect(await store.effects.forAddress(address)).toEqual([]);
    calls[0]!.resolve({ doubled: 2 });
    await new Promise((r) => setTimeout(r, 50));
    expect((await host.read(address))?.context).toMatchObject({ results: [] });
    await host.ask(address, { type: 'START', n: 3 });
    await until(() => calls.length === 2);
    expect(calls[1]!.ctx.key).not.toBe(calls[0]!.ctx.key);
    calls[1]!.reject(new PlatformError('TOOL_NOT_FOUND', 'no such tool'));
    await until(async () => (await host.read(address))?.value === 'idle');
    expect((await host.read(address))?.context).toMatchObject({ results: [], errors: ['no such tool'] });
  });

  it('tells its effect observer of every run by kind and effect name: done, failed, aborted', async () => {
    reset();
    const seen: string[] = [];
    const host = newHost({
      effectObserver: {
        started: (kind, effect) => void seen.push(`started ${kind} ${effect}`),
        finished: (kind, effect, outcome, seconds) => void seen.push(`${outcome} ${kind} ${effect} ${seconds >= 0}`),
      },
    });
    const address = 'job/acc9/j9';
    await host.create(address, {});
    await host.ask(address, { type: 'START', n: 1 });
    await until(() => calls.length === 1);
    calls[0]!.resolve({ doubled: 2 });
    await until(async () => (await host.read(address))?.value === 'idle');
    await host.ask(address, { type: 'START', n: 2 });
    await until(() => calls.length === 2);
    calls[1]!.reject(new PlatformError('TOOL_NOT_FOUND', 'no such tool'));
    await until(async () => (await host.read(address))?.value === 'idle');
    await host.ask(address, { type: 'START', n: 3 });
    await until(() => calls.length === 3);
    await host.ask(address, { type: 'CANCEL' });
    calls[2]!.resolve({ doubled: 6 });
    await until(() => seen.length === 6);
    expect(seen).toEqual(['started job work', 'done job work true', 'started job work', 'failed job work true', 'started job work', 'aborted job work true']);
  });

  it('a subscriber gets the snapshot, then every later event in order, with no gap and no duplicate', async () => {
    reset();
    // A bus that loses every third event message on its way to subscribers: the journal fills the gaps.
    let n = 0;
    const lossy: Bus = { ...bus, publish: (subject, data) => (subject.startsWith('actor.events.') && ++n % 3 === 0 ? undefined : bus.publish(subject, data)) };
    const host = newHost({ bus: lossy });
    const address = 'job/acc4/j4';
    await host.create(address, {});
    await host.ask(address, { type: 'PONG' });
    await host.ask(address, { type: 'PONG' });
    const items: ActorStreamItem[] = [];
    const sub = subscribeActor({ bus, actors: host, journal: store.actorEvents }, address, (i) => items.push(i), { catchUpMs: 50 });
    const snapshot = await sub.ready;
    expect(snapshot).toMatchObject({ value: 'idle', seq: 2 });
    for (let i = 0; i < 7; i++) await host.ask(address, { type: 'PONG' });
    await until(() => items.filter((i) => i.type === 'event').length === 7);
    await new Promise((r) => setTimeout(r, 30));
    expect(items[0]).toMatchObject({ type: 'snapshot', state: { seq: 2, context: { pongs: 2 } } });
    expect(items.slice(1).map((i) => (i.type === 'event' ? i.seq : -1))).toEqual([3, 4, 5, 6, 7, 8, 9]);
    await sub.close();
  });

  it('effects publish progress to subscribers; it is never journaled', async () => {
    reset();
    const host = newHost();
    const address = 'job/acc5/j5';
    await host.create(address, {});
    const items: ActorStreamItem[] = [];
    const sub = subscribeActor({ bus, actors: host, journal: store.actorEvents }, address, (i) => items.push(i));
    await sub.ready;
    await host.ask(address, { type: 'START', n: 4 });
    await until(() => calls.length === 1);
    calls[0]!.ctx.progress({ chunk: 'hal' });
    calls[0]!.ctx.progress({ chunk: 'f' });
    calls[0]!.resolve({ doubled: 8 });
    await until(() => items.some((i) => i.type === 'event'));
    expect(items.filter((i) => i.type === 'progress').map((i) => (i as { data: unknown }).data)).toEqual([{ chunk: 'hal' }, { chunk: 'f' }]);
    expect((await store.actorEvents.after(address, 0)).map((e) => (e.event as { type: string }).type)).toEqual(['job.done']);
    await sub.close();
  });

  it('messages to other actors go out after the commit; one to no actor is dropped; undelivered ones wait for the next sweep', async () => {
    reset();
    const host = newHost();
    const [a, b] = ['job/acc6/a', 'job/acc6/b'];
    await host.create(a, {});
    await host.create(b, {});
    await host.ask(a, { type: 'PING', to: b });
    await until(async () => ((await host.read(b))?.context as unknown as JobContext).pongs === 1);
    await host.ask(a, { type: 'PING', to: 'job/acc6/nobody' });
    await until(async () => (await store.outbox.pending(null)).length === 0);

    // While no system takes messages, they stay in the outbox; the next owner's sweep delivers them.
    const down = newHost();
    down.bindSystem({ ask: () => Promise.reject(new PlatformError('PLT_ACTOR_UNAVAILABLE')), create: () => Promise.reject(new Error('x')), read: () => Promise.resolve(null) });
    await down.ask(a, { type: 'PING', to: b });
    expect((await store.outbox.pending(null)).map((m) => m.target)).toEqual([b]);
    await down.stop();
    const next = newHost();
    await next.resume();
    await until(async () => ((await next.read(b))?.context as unknown as JobContext).pongs === 2);
    await until(async () => (await store.outbox.pending(null)).length === 0);
  }, 20_000);

  it('projections are written in the turn of the change; replies go to the asker only', async () => {
    reset();
    const host = newHost();
    const address = 'job/acc7/j7';
    await host.create(address, {});
    await host.ask(address, { type: 'START', n: 2 });
    expect(projected.map((p) => p.value)).toEqual(['idle', 'working']);
    const account = 'account/acc7/acc7';
    await host.create(account, { accountId: 'acc7', credits: 5 });
    const debit = await host.ask(account, { type: 'DEBIT', amount: 2, requestId: 'r1' });
    expect(debit.replies).toEqual([{ type: 'reply.debit', requestId: 'r1', ok: true }]);
    expect(debit.events).toEqual([]);
    expect(await store.actorEvents.after(account, 0)).toEqual([]);
    const suspended = await host.ask(account, { type: 'SUSPEND' });
    expect(suspended.events).toEqual([{ seq: 1, event: { type: 'account.suspended', until: null } }]);
    expect(suspended.seq).toBe(1);
  });

  it('a kind whose machine names an effect the runtime does not implement is refused', () => {
    expect(() => createActorHost({ store, kinds: [{ kind: 'job', logic: jobMachine }] })).toThrow(expect.objectContaining({ code: 'PLT_EFFECT_UNDECLARED' }));
  });
});
