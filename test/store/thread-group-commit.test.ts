import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentThreadsRepo, groupThreadStarts, type ThreadScope } from '../../store/index.ts';
import { mustRun } from '../helpers/env.ts';
import { freshStore, type DriverName } from '../helpers/store.ts';

const drivers: DriverName[] = ['pglite', ...(mustRun('postgres') ? (['pg'] as const) : [])];

/**
 * Thread starts (the first write of every run: the user's message and the answer or the tool calls) written together
 * when they come in at once (store/thread-group-commit.ts): fewer statements, and each start's own outcome kept.
 */
describe.each(drivers)('thread starts grouped on %s', (driver) => {
  let store: Awaited<ReturnType<typeof freshStore>>;
  let scope: ThreadScope;
  let statements = 0;
  let lastSql: { sql: string; params: readonly unknown[] } | null = null;
  let grouped: ReturnType<typeof agentThreadsRepo>;

  beforeAll(async () => {
    store = await freshStore(driver);
    const accountId = (await store.accounts.create({ id: randomUUID(), name: 'Acme' })).id;
    const agent = await store.agents.create({ id: randomUUID(), accountId, handle: `a-${randomUUID().slice(0, 8)}`, name: 'A', description: '', instructions: '', model: 'scripted/demo' });
    scope = { accountId, agentId: agent.id, ownerId: 'p1' };
    const counting = { query: ((sql: string, params?: readonly unknown[]) => (statements++, (lastSql = { sql, params: params ?? [] }), store.db.query(sql, params))) as typeof store.db.query, exec: (sql: string) => store.db.exec(sql) };
    grouped = groupThreadStarts(agentThreadsRepo(counting), counting);
  });
  afterAll(async () => store.drop());

  const user = (id: string, text = id) => ({ messageId: id, taskId: null, kind: 'user' as const, body: { text } });
  const answer = (id: string) => ({ messageId: `${id}:reply`, taskId: `t-${id}`, kind: 'agent' as const, body: { text: `re ${id}` } });

  it('[A2A-TASK-19] many runs starting at once share a few statements; every thread holds its records in order', async () => {
    const threads = Array.from({ length: 40 }, () => randomUUID());
    statements = 0;
    const results = await Promise.all(threads.map((t, i) => grouped.start(scope, t, [user(`m${i}`), answer(`m${i}`)], { durable: i % 2 === 0 })));
    expect(results).toEqual(threads.map(() => true));
    expect(statements).toBeGreaterThan(1);
    expect(statements).toBeLessThanOrEqual(6);
    for (const [i, t] of threads.entries()) {
      const recs = await store.agentThreads.tail(scope, t, 10);
      expect(recs.map((r) => [r.messageId, r.kind, r.taskId, r.body])).toEqual([
        [`m${i}`, 'user', null, { text: `m${i}` }],
        [`m${i}:reply`, 'agent', `t-m${i}`, { text: `re m${i}` }],
      ]);
    }
  });

  it('[A2A-TASK-18] a start is all or nothing: one whose message id its thread holds writes nothing and answers false, in a batch or alone', async () => {
    const thread = randomUUID();
    expect(await grouped.start(scope, thread, [user('first')])).toBe(true);
    const others = Array.from({ length: 8 }, () => randomUUID());
    // The first two starts go alone (nothing is in flight yet); those behind them are written as one batch.
    statements = 0;
    const [f1, f2, again, sameTwice1, sameTwice2, ...rest] = await Promise.all([
      grouped.start(scope, randomUUID(), [user('lead1')]),
      grouped.start(scope, randomUUID(), [user('lead2')]),
      // Holds `first` already: its new record is not written either.
      grouped.start(scope, thread, [user('first'), answer('first')]),
      // The same message twice at once in one thread: the first is written, the second answers false.
      grouped.start(scope, others[0]!, [user('twice', 'one')]),
      grouped.start(scope, others[0]!, [user('twice', 'two')]),
      ...others.slice(1).map((t) => grouped.start(scope, t, [user('x'), answer('x')])),
    ]);
    expect(statements).toBe(3);
    expect([f1, f2]).toEqual([true, true]);
    expect(again).toBe(false);
    expect([sameTwice1, sameTwice2]).toEqual([true, false]);
    expect(rest).toEqual(others.slice(1).map(() => true));
    expect((await store.agentThreads.tail(scope, thread, 10)).map((r) => r.messageId)).toEqual(['first']);
    expect((await store.agentThreads.tail(scope, others[0]!, 10)).map((r) => r.body)).toEqual([{ text: 'one' }]);
    expect(await grouped.start(scope, thread, [user('first')])).toBe(false);
  });

  it('a batch the database refuses is written again start by start: only the start at fault fails', async () => {
    const gone = { ...scope, agentId: randomUUID() };
    const threads = Array.from({ length: 6 }, () => randomUUID());
    // Behind two starts that go alone, so that the orphan is in a batch.
    const results = await Promise.allSettled([
      ...threads.slice(0, 2).map((t) => grouped.start(scope, t, [user('ok')])),
      grouped.start(gone, randomUUID(), [user('orphan')]),
      ...threads.slice(2).map((t) => grouped.start(scope, t, [user('ok')])),
    ]);
    expect(results[2]).toMatchObject({ status: 'rejected', reason: { code: '23503' } });
    expect([...results.slice(0, 2), ...results.slice(3)]).toEqual(threads.map(() => ({ status: 'fulfilled', value: true })));
    for (const t of threads) expect((await store.agentThreads.tail(scope, t, 10)).map((r) => r.messageId)).toEqual(['ok']);
  });

  it('[A2A-TASK-19] a batch looks up the message ids its threads hold by index, not by reading the whole history', async () => {
    // A history of 10,000 messages in 5,000 threads, and the planner's statistics of it.
    await store.db.query(
      `with t as (insert into agent_threads (account_id, agent_id, owner_id, id) select $1, $2, 'bulk', 'b' || i from generate_series(1, 5000) i)
       insert into agent_messages (account_id, agent_id, owner_id, thread_id, message_id, task_id, kind, body)
       select $1, $2, 'bulk', 'b' || i, 'm' || i || k, null, 'user', '{}' from generate_series(1, 5000) i, generate_series(1, 2) k`,
      [scope.accountId, scope.agentId],
    );
    await store.db.exec('analyze agent_threads; analyze agent_messages');
    // Two starts go alone; the four behind them are one batch, its statement the last one made.
    await Promise.all(Array.from({ length: 6 }, () => grouped.start(scope, randomUUID(), [user('h'), answer('h')])));
    const batch = lastSql!;
    expect(batch.sql).toContain('jsonb_to_recordset');
    const { rows } = await store.db.query<{ 'QUERY PLAN': unknown }>(`explain (format json) ${batch.sql}`, batch.params);
    const scans: string[] = [];
    const walk = (node: Record<string, unknown>) => {
      if (node['Relation Name'] === 'agent_messages') scans.push(String(node['Node Type']));
      for (const child of (node['Plans'] as Record<string, unknown>[] | undefined) ?? []) walk(child);
    };
    const plan = rows[0]!['QUERY PLAN'];
    walk((typeof plan === 'string' ? JSON.parse(plan) : plan)[0].Plan);
    expect(scans).not.toContain('Seq Scan');
    expect(scans.some((s) => s.startsWith('Index'))).toBe(true);
  });
});
