import os from 'node:os';
import type { A2aNodeInfo } from '../a2a-node.ts';
import { a2aLoadClient, check, type A2aLoadClient, type Expectation } from '../a2a-client.ts';
import { startJsonChild } from '../child.ts';
import { scope, type Scope } from '../cleanup.ts';
import { privateDatabase, SetupError } from '../cluster.ts';
import type { Row } from '../report.ts';
import { measure, status, type Phase } from '../runner.ts';
import { runParameters, type Scenario } from '../scenario.ts';
import { ratio } from '../stats.ts';

const TARGETS = { minThroughputRatio: 1.0, maxP99Ratio: 1.5 };

/** The two messages and what the demo agent's scripted model (runtime/models/demo-rules.yaml) answers to them. */
export const REPLY_PROMPT = 'echo hello from the bench';
export const REPLY_TEXT = 'hello from the bench';
export const TASK_PROMPT = 'add 2 and 40';
export const TASK_TEXT = 'The sum is 42.';

interface ReferenceInfo {
  url: string;
  mode: 'reply' | 'task';
  store: 'memory' | 'database';
  storeNote?: string;
}

/** A database of its own on DATABASE_URL's server, or why there is none: the task comparison needs PostgreSQL. */
async function database(s: Scope, what: string): Promise<{ url: string } | { why: string }> {
  const admin = process.env.DATABASE_URL;
  if (!admin) return { why: 'DATABASE_URL is not set' };
  try {
    return { url: await privateDatabase(s, admin) };
  } catch (err) {
    return { why: `no PostgreSQL reachable at DATABASE_URL for ${what} (${(err as Error).message})` };
  }
}

/** One call of a phase: a SendMessage whose answer must be right, its shape counted. */
function caller(client: A2aLoadClient, prompt: string, want: Expectation, shapes: Record<string, number>): () => Promise<void> {
  return async () => {
    const shape = check(await client.send(prompt), want);
    shapes[shape] = (shapes[shape] ?? 0) + 1;
  };
}

/** One SendMessage before measuring, so a side that answers errors stops the run with its answer, not a table. */
async function preflight(label: string, client: A2aLoadClient, prompt: string, want: Expectation, ours: boolean): Promise<void> {
  try {
    check(await client.send(prompt), want);
  } catch (err) {
    const e = err as Error & { code?: string };
    const hint =
      ours && /-32004/.test(e.message)
        ? '\n  The agent gateway answers task methods with UnsupportedOperation (-32004) while no agent runtime (A2aBackend) is wired into the node: this build cannot run agents yet, so there is nothing to measure.'
        : '';
    throw new SetupError(`a2a-send: ${label} did not answer ${JSON.stringify(prompt)} correctly: ${e.message}${hint}`);
  }
}

const shapeNote = (label: string, shapes: Record<string, number>) =>
  `${label} answered with ${Object.entries(shapes)
    .map(([k, n]) => `${n.toLocaleString('en-US')} ${k === 'message' ? 'Messages' : 'completed Tasks'}`)
    .join(' and ') || 'nothing'} (warm-up included).`;

/**
 * A2A `SendMessage` through the whole agent gateway of a `platform` node running as its own process (host routing,
 * API-key admission, JSON-RPC envelope, the agent runtime, the scripted model over its OpenAI-compatible wire, tool
 * calls through the lane and the sandbox, tasks persisted in the node's database), beside the official @a2a-js/sdk
 * server as a process of its own with a trivial executor: (a) a bare reply against its `reply` executor; (b) a
 * tool-calling task against its `task` executor with the SDK's PostgreSQL task store. Same load client, same
 * concurrency, same duration and warm-up; every answer is checked, and a run with any wrong answer fails.
 */
export const a2aSend: Scenario = {
  name: 'a2a-send',
  summary: 'A2A SendMessage through the agent gateway (bare reply; tool-calling task) vs the @a2a-js/sdk server, each its own process',
  needs: [],
  defaultConcurrency: 16,
  async run(opts) {
    const s = scope();
    try {
      status('a2a-send: creating the databases');
      const nodeDb = await database(s, 'the platform');
      const refDb = 'url' in nodeDb ? await database(s, 'the reference') : nodeDb;
      const taskSkip = 'why' in refDb ? refDb.why : undefined;

      status(`a2a-send: starting a platform node (${'url' in nodeDb ? 'PostgreSQL' : 'PGlite'}) and the @a2a-js/sdk reference servers`);
      const nodeEnv: NodeJS.ProcessEnv = { ...process.env, PLATFORM_MAX_CONNECTIONS_PER_ADDRESS: String(Math.max(1024, opts.concurrency * 2)) };
      if ('url' in nodeDb) nodeEnv.DATABASE_URL = nodeDb.url;
      else delete nodeEnv.DATABASE_URL;
      const refEnv = (url?: string): NodeJS.ProcessEnv => {
        const env: NodeJS.ProcessEnv = { ...process.env };
        if (url) env.DATABASE_URL = url;
        else delete env.DATABASE_URL;
        return env;
      };
      const [node, replyRef, taskRef] = await Promise.all([
        startJsonChild<A2aNodeInfo>(s, 'the platform node', 'a2a-node.ts', [], nodeEnv, 120_000),
        startJsonChild<ReferenceInfo>(s, 'the SDK reference (reply)', 'a2a-reference.ts', ['--mode', 'reply', '--store', 'memory'], refEnv()),
        'url' in refDb ? startJsonChild<ReferenceInfo>(s, 'the SDK reference (task)', 'a2a-reference.ts', ['--mode', 'task', '--store', 'database'], refEnv(refDb.url)) : Promise.resolve(undefined),
      ]);
      status(`a2a-send: platform node (pid ${node.pid}, ${node.driver}) at ${node.url}, agent host ${node.host}; SDK reply server (pid ${replyRef.pid}) at ${replyRef.url}${taskRef ? `; SDK task server (pid ${taskRef.pid}, ${taskRef.store} task store) at ${taskRef.url}` : ''}`);
      if (taskSkip) status(`a2a-send: the task comparison is skipped: ${taskSkip}`);
      if (taskRef?.storeNote) status(`a2a-send: ${taskRef.storeNote}`);

      const ours = a2aLoadClient({ origin: node.url, host: node.host, headers: { authorization: `Bearer ${node.key}` } }, opts.concurrency);
      const refReply = a2aLoadClient({ origin: replyRef.url, host: new URL(replyRef.url).host }, opts.concurrency);
      const refTask = taskRef ? a2aLoadClient({ origin: taskRef.url, host: new URL(taskRef.url).host }, opts.concurrency) : undefined;
      s.defer('close the load clients', async () => {
        await ours.close();
        await refReply.close();
        await refTask?.close();
      });

      // Both serve their card; then one correct answer from each side before anything is measured.
      for (const [label, client] of [['our agent gateway', ours], ['the SDK reference', refReply]] as const) {
        const c = await client.card();
        if (c.status !== 200 || typeof c.body?.name !== 'string') throw new SetupError(`a2a-send: ${label} serves no agent card at /.well-known/agent-card.json (HTTP ${c.status})`);
      }
      const wantRefReply: Expectation = { shape: 'message', text: REPLY_TEXT };
      // A bare reply is a Message in A2A; a runtime that wraps it in a completed Task still answers correctly (the
      // notes say which it was).
      const wantOurReply: Expectation = { shape: 'either', text: REPLY_TEXT };
      const wantTask: Expectation = { shape: 'task', text: TASK_TEXT };
      await preflight('the SDK reference (reply)', refReply, REPLY_PROMPT, wantRefReply, false);
      await preflight('our agent gateway (bare reply)', ours, REPLY_PROMPT, wantOurReply, true);
      if (refTask) {
        await preflight('the SDK reference (task)', refTask, TASK_PROMPT, wantTask, false);
        await preflight('our agent gateway (tool-calling task)', ours, TASK_PROMPT, wantTask, true);
      }

      const shapes = { refReply: {}, ourReply: {}, refTask: {}, ourTask: {} } as Record<'refReply' | 'ourReply' | 'refTask' | 'ourTask', Record<string, number>>;
      const refTaskLabel = `@a2a-js/sdk server, task executor, ${taskRef?.store === 'database' ? 'PostgreSQL (DatabaseTaskStore)' : 'in-memory task store'}`;
      const phases: Phase[] = [
        { label: '@a2a-js/sdk server, reply executor', concurrency: opts.concurrency, call: caller(refReply, REPLY_PROMPT, wantRefReply, shapes.refReply) },
        { label: 'platform agent gateway, bare reply (scripted model)', concurrency: opts.concurrency, call: caller(ours, REPLY_PROMPT, wantOurReply, shapes.ourReply) },
        ...(refTask
          ? [
              { label: refTaskLabel, concurrency: opts.concurrency, call: caller(refTask, TASK_PROMPT, wantTask, shapes.refTask) },
              { label: 'platform agent gateway, tool-calling task (scripted model, calc_add)', concurrency: opts.concurrency, call: caller(ours, TASK_PROMPT, wantTask, shapes.ourTask) },
            ]
          : []),
      ];
      const measured = await measure('a2a-send', phases, opts);

      // Wrong answers are not a slow server: a run with any of them reports nothing.
      const failed = measured.filter((m) => m.errors > 0);
      if (failed.length) {
        throw new Error(
          `a2a-send: ${failed.length} phase(s) had wrong answers or errors, so no comparison is reported:\n${failed
            .map((m) => `  ${m.label}: ${m.errors} of ${m.calls + m.errors} calls: ${Object.entries(m.errorKinds).map(([k, n]) => `${k} ×${n}`).join('; ')}`)
            .join('\n')}`,
        );
      }

      const compare = (ref: (typeof measured)[number], our: (typeof measured)[number]): Row[] => {
        const tput = ratio(our.throughput, ref.throughput);
        const p99 = ratio(our.p99, ref.p99);
        return [
          { ...ref, role: 'reference' },
          {
            ...our,
            role: 'ours',
            vs: ref.label,
            targets: [
              { description: `throughput ≥ ${TARGETS.minThroughputRatio.toFixed(1)}× the SDK server (${tput.toFixed(2)}×)`, met: tput >= TARGETS.minThroughputRatio },
              { description: `p99 ≤ ${TARGETS.maxP99Ratio}× the SDK server (${p99.toFixed(2)}×)`, met: p99 <= TARGETS.maxP99Ratio },
            ],
          },
        ];
      };
      const [rr, or, rt, ot] = measured;
      const rows = [...compare(rr!, or!), ...(rt && ot ? compare(rt, ot) : [])];

      const notes = [
        `${taskRef ? 'Three' : 'Two'} processes besides the bench's: one \`platform\` node (${node.driver === 'pg' ? 'PostgreSQL' : 'PGlite'}, no NATS) and ${taskRef ? 'two @a2a-js/sdk 1.3.0 servers' : 'one @a2a-js/sdk 1.3.0 server'} (DefaultRequestHandler behind its Express JSON-RPC handler). The load client (undici, one keep-alive connection per caller in flight, \`A2A-Version: 1.0\`) and every server share this machine's ${os.cpus().length} cores, so the numbers are noisy: compare ratios of the same run, not runs.`,
        `Ours: host routing to \`${node.host.split(':')[0]}\`, API-key admission (the demo service principal), the JSON-RPC envelope, the agent runtime and the scripted model \`scripted/demo\` over its OpenAI-compatible wire; every call is a new context. The reference's executor only publishes events: no model, no admission.`,
        `(a) ${JSON.stringify(REPLY_PROMPT)} → ${JSON.stringify(REPLY_TEXT)}: the scripted model answers without a tool. ${shapeNote('Ours', shapes.ourReply)}`,
        taskRef
          ? `(b) ${JSON.stringify(TASK_PROMPT)} → ${JSON.stringify(TASK_TEXT)}: the scripted model calls \`calc_add\` (a WASM plugin bound to the demo agent, run in the sandbox), then answers; the reference publishes a Task, a working status, an artifact and a completed status into ${taskRef.store === 'database' ? "the SDK's DatabaseTaskStore on PostgreSQL (its own `a2a-db upgrade` schema, a pool of 10)" : 'its in-memory task store'}. ${shapeNote('Ours', shapes.ourTask)}`
          : `(b) The tool-calling task comparison was skipped: ${taskSkip}.`,
        ...(taskRef?.storeNote ? [`The reference's task store is not the one the issue names: ${taskRef.storeNote}. Install \`kysely\` to compare against the SDK's PostgreSQL task store.`] : []),
        'Every answer was checked (shape, state, text): a run with any wrong answer or error fails instead of reporting.',
      ];
      return {
        title: 'A2A SendMessage: the agent gateway vs the @a2a-js/sdk server',
        parameters: {
          ...runParameters(opts),
          'platform database': node.driver,
          'reference task store': taskRef ? taskRef.store : 'skipped',
        },
        rows,
        notes,
      };
    } finally {
      await s.close();
    }
  },
};
