import os from 'node:os';
import pg from 'pg';
import { accountWorkload } from '../actors.ts';
import { scope } from '../cleanup.ts';
import { oneNodeCluster } from '../cluster.ts';
import { versus } from '../report.ts';
import { measure, status } from '../runner.ts';
import { runParameters, type Scenario } from '../scenario.ts';

/** pgbench's default scale of rows touched at random: every write hits one of this many actors. */
const ACTORS = 1000;
/** Issue 16 §2: durable turns at half the speed of PostgreSQL's own single-row updates, or better. */
const TARGETS = { minThroughputRatio: 0.5 };
const RAW_PREFIX = 'bench-raw/';

/**
 * Durable actor turns (DEBIT: the owner writes the snapshot, fenced by version and lease revision, before it answers)
 * to Account actors on a `platform serve` child, asked over NATS from this process, beside PostgreSQL's own
 * single-row updates of copies of the same rows (same table, same indexes, same snapshot sizes), pgbench-style: one
 * statement per transaction, the same number of clients as calls in flight, from this process.
 */
export const actorWrite: Scenario = {
  name: 'actor-write',
  summary: 'durable actor turns (a DEBIT, its snapshot written to PostgreSQL) on a platform serve child vs raw PostgreSQL single-row updates of the same rows',
  needs: ['DATABASE_URL', 'NATS_URL'],
  defaultConcurrency: 16,
  async run(opts) {
    const s = scope();
    try {
      const { databaseUrl, node, router } = await oneNodeCluster(s, 'actor-write');
      status(`actor-write: creating ${ACTORS} Account actors on the node`);
      const work = await accountWorkload(router, ACTORS);

      // The reference's rows: copies of the actors' own rows, written by no actor.
      const pool = new pg.Pool({ connectionString: databaseUrl, max: opts.concurrency });
      s.defer('close the reference pool', () => pool.end());
      await pool.query(
        `insert into actor_snapshots (address, kind, account_id, version, lease_rev, snapshot, event_seq)
         select $2 || address, kind, account_id, version, lease_rev, snapshot, event_seq from actor_snapshots where address = any($1::text[])`,
        [work.actors, RAW_PREFIX],
      );
      const rawRows = work.actors.map((a) => RAW_PREFIX + a);
      let next = 0;
      const rawUpdate = async () => {
        const { rowCount } = await pool.query(
          `update actor_snapshots set version = version + 1, updated_at = now(),
             snapshot = jsonb_set(snapshot, '{context,credits}', to_jsonb((snapshot #>> '{context,credits}')::bigint - 1))
           where address = $1`,
          [rawRows[next++ % rawRows.length]],
        );
        if (rowCount !== 1) throw new Error('raw update missed its row');
      };

      const [reference, debit] = await measure(
        'actor-write',
        [
          { label: 'PostgreSQL single-row UPDATE (one statement per transaction)', concurrency: opts.concurrency, call: rawUpdate },
          { label: 'actor DEBIT (routed, durable turn)', concurrency: opts.concurrency, call: work.debit },
        ],
        opts,
        [
          { label: 'node', pid: node.pid },
          { label: 'nats-server', command: 'nats-server' },
          { label: 'postgres', command: 'postgres' },
        ],
      );
      const applied = await work.applied();
      const acked = work.acked();
      const { rows } = await pool.query<{ synchronous_commit: string }>('show synchronous_commit');
      return {
        title: 'durable actor turns vs PostgreSQL single-row updates',
        parameters: { ...runParameters(opts), actors: ACTORS, 'hosting nodes': 1, synchronous_commit: rows[0]!.synchronous_commit },
        rows: [
          { ...reference!, role: 'reference' },
          { ...debit!, role: 'ours', vs: reference!.label, targets: versus(debit!, reference!, TARGETS) },
        ],
        notes: [
          `The bench process hosts no shard: every DEBIT crosses NATS to one \`platform serve\` child, which owns all 256 shards, runs the Account statechart and writes the turn (snapshot, version and lease fence checked in the same statement) to PostgreSQL before it answers. The reference updates copies of the same ${ACTORS} rows in the same table directly, ${opts.concurrency} connections, as pgbench's simple-update script would.`,
          `${acked.toLocaleString('en-US')} DEBITs were acknowledged (warm-up included) and ${applied.toLocaleString('en-US')} credits were taken from the actors${applied === acked ? ': every acknowledged DEBIT was applied once' : ` (the difference is ${applied - acked}: asks that failed or timed out after being applied)`}.`,
          `The load generator, the node, NATS and PostgreSQL share this machine's ${os.cpus().length} cores; the CPU column shows the node's share.`,
        ],
      };
    } finally {
      await s.close();
    }
  },
};
