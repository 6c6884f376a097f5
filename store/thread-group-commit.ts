import type { Queryable } from './db.ts';
import type { agentThreadsRepo, ThreadRecordInput, ThreadScope } from './agent-tasks-repo.ts';
import { groupWrites, settle, type Outcome } from './group-writes.ts';

type ThreadsRepo = ReturnType<typeof agentThreadsRepo>;

/** At most this many thread starts share one statement. */
const MAX_BATCH = 64;
/** Batches in flight at once (see group-writes.ts). */
const MAX_IN_FLIGHT = 2;

interface Start {
  scope: ThreadScope;
  threadId: string;
  recs: ThreadRecordInput[];
  durable: boolean;
}

/**
 * The batch statement: each start's thread row and records, written only for the starts none of whose message ids
 * their thread holds already, nor an earlier start of the batch has (a start is all or nothing, as the single
 * statement is); how many records of each start were written comes back. `$2` turns `synchronous_commit` off for the
 * statement's transaction when no start in it needs the disk.
 *
 * `held` probes the history's unique index once per record (a lateral lookup). As a plain join, the planner, which
 * guesses a hundred rows for any `jsonb_to_recordset`, hashed the batch and read the whole of `agent_messages` until
 * the table outgrew that guess (at 10,000 messages: 171 pages a batch, where the probes read 4 per record; the a2a-send
 * bench's batches cost PostgreSQL 2 ms each, five times a single start's statement).
 */
const BATCH_SQL = `with v as (
    select * from jsonb_to_recordset($1::jsonb) as v(i int, c int, a uuid, g uuid, o text, t text, m text, k text, n text, b jsonb)
  ),
  held as (
    select v.c from v cross join lateral (
      select from agent_messages x
      where x.account_id = v.a and x.agent_id = v.g and x.owner_id = v.o and x.thread_id = v.t and x.message_id = v.m
      limit 1
    ) x
    union
    select v.c from v join v w on w.a = v.a and w.g = v.g and w.o = v.o and w.t = v.t and w.m = v.m and w.c < v.c
  ),
  fresh as (select * from v where v.c not in (select c from held)),
  async_commit as (select set_config('synchronous_commit', 'off', true) where $2::boolean),
  thread as (
    insert into agent_threads (account_id, agent_id, owner_id, id)
    select distinct a, g, o, t from fresh left join async_commit on true
    on conflict do nothing
  ),
  written as (
    insert into agent_messages (account_id, agent_id, owner_id, thread_id, message_id, task_id, kind, body)
    select a, g, o, t, m, k, n, b from fresh order by i
    on conflict (account_id, agent_id, owner_id, thread_id, message_id) do nothing
    returning account_id, agent_id, owner_id, thread_id, message_id
  )
  select f.c, count(*)::int as n from written w
    join fresh f on w.account_id = f.a and w.agent_id = f.g and w.owner_id = f.o and w.thread_id = f.t and w.message_id = f.m
  group by f.c`;

/**
 * Group commit of thread starts (group-writes.ts): the first write of every run — the user's message and the model's
 * answer, or its tool calls — is one statement per run; under load the runs that come in while earlier ones are being
 * written share one. A start written alone takes the single statement, as before. A start keeps its own outcome: false
 * when its thread holds one of its message ids already. A batch that fails (an agent deleted meanwhile: a foreign key)
 * is written again start by start, so each fails or succeeds alone.
 *
 * Two starts of one batch with a message id in common in the same thread (a client sending one message twice at
 * once): the first is written, the second answers false and writes nothing, as the single statements would.
 */
export function groupThreadStarts(repo: ThreadsRepo, db: Queryable): ThreadsRepo {
  const one = (s: Start) => repo.start(s.scope, s.threadId, s.recs, { durable: s.durable });
  const start = groupWrites<Start, boolean>({
    maxBatch: MAX_BATCH,
    maxInFlight: MAX_IN_FLIGHT,
    async write(batch): Promise<Outcome<boolean>[]> {
      if (batch.length === 1) return [await settle(one(batch[0]!))];
      let i = 0;
      const rows = batch.flatMap((s, c) =>
        s.recs.map((r) => ({ i: i++, c, a: s.scope.accountId, g: s.scope.agentId, o: s.scope.ownerId, t: s.threadId, m: r.messageId, k: r.taskId, n: r.kind, b: r.body })),
      );
      let written: Map<number, number>;
      try {
        const { rows: out } = await db.query<{ c: number; n: number }>(BATCH_SQL, [JSON.stringify(rows), batch.every((s) => !s.durable)]);
        written = new Map(out.map((r) => [Number(r.c), Number(r.n)]));
      } catch {
        return Promise.all(batch.map((s) => settle(one(s))));
      }
      return batch.map((s, c) => ({ ok: true, value: written.get(c) === s.recs.length }));
    },
  });
  return {
    ...repo,
    start: (scope, threadId, recs, opts = {}) => start({ scope, threadId, recs, durable: opts.durable !== false }),
  };
}
