import os from 'node:os';
import type { A2aNodeInfo } from '../a2a-node.ts';
import type { ScriptedModelInfo } from '../scripted-model.ts';
import { a2aLoadClient, check, type A2aLoadClient, type Expectation } from '../a2a-client.ts';
import { startJsonChild } from '../child.ts';
import { scope, type Scope } from '../cleanup.ts';
import { privateDatabase, SetupError } from '../cluster.ts';
import type { Row } from '../report.ts';
import { measure, status, type Phase } from '../runner.ts';
import { runParameters, type Scenario } from '../scenario.ts';
import { ratio } from '../stats.ts';

/**
 * Issue 16 §2: 1.5× the SDK server's calls/s in both variants (bare reply, tool-calling task), p99 within 1.5× its,
 * against the reference that does the same work (the model executor). The trivial executor runs no model and no tool:
 * its rows show what the agent runtime costs against a server that does nothing, without a target.
 */
const TARGETS = { minThroughputRatio: 1.5, maxP99Ratio: 1.5 };

/** The two messages and what the demo agent's scripted model (runtime/models/demo-rules.yaml) answers to them. */
export const REPLY_PROMPT = 'echo hello from the bench';
export const REPLY_TEXT = 'hello from the bench';
export const TASK_PROMPT = 'add 2 and 40';
export const TASK_TEXT = 'The sum is 42.';

interface ReferenceInfo {
  url: string;
  mode: 'reply' | 'task';
  executor: 'trivial' | 'model';
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

/** One comparison of the table: a reference phase, and ours measured right after it. */
interface Pair {
  ref: Phase;
  ours: Phase;
}

/**
 * A2A `SendMessage` through the whole agent gateway of a `platform` node running as its own process (host routing,
 * API-key admission, JSON-RPC envelope, the agent runtime, the scripted model (a process of its own, as a model
 * service is) over its OpenAI-compatible wire, tool calls through the lane and the sandbox, tasks persisted in the
 * node's database), beside the official @a2a-js/sdk server, each reference a process of its own, with two
 * executors: a trivial one (no model: the gateway's overhead against nothing) and a model one (the same scripted model
 * through the same AI SDK provider code, `calc_add` as a JS tool: the same model and tool work on both sides). (a) a
 * bare reply against the `reply` executors; (b) a tool-calling task against the `task` executors with the SDK's
 * PostgreSQL task store. Ours is measured right after each reference, so each comparison is two adjacent phases.
 * Same load client, same concurrency, same duration and warm-up; every answer is checked, and a run with any wrong
 * answer fails.
 */
export const a2aSend: Scenario = {
  name: 'a2a-send',
  summary: 'A2A SendMessage through the agent gateway (bare reply; tool-calling task) vs the @a2a-js/sdk server with a trivial and with a model executor, each its own process',
  needs: [],
  defaultConcurrency: 16,
  async run(opts) {
    const s = scope();
    try {
      status('a2a-send: creating the databases');
      const nodeDb = await database(s, 'the platform');
      const refDb = 'url' in nodeDb ? await database(s, 'the reference (trivial)') : nodeDb;
      const refModelDb = 'url' in refDb ? await database(s, 'the reference (model)') : refDb;
      const taskSkip = 'why' in refModelDb ? refModelDb.why : undefined;

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
      // The model is a service of its own, as in any deployment: one process serves both sides (they are measured in
      // turn), and neither side under test spends its CPU serving it.
      const model = await startJsonChild<ScriptedModelInfo>(s, 'the scripted model', 'scripted-model', [], refEnv());
      const modelArgs = ['--model-url', model.baseUrl];
      const reference = (executor: 'trivial' | 'model', mode: 'reply' | 'task', db?: string) =>
        startJsonChild<ReferenceInfo>(s, `the SDK reference (${executor}, ${mode})`, 'a2a-reference-server', ['--mode', mode, '--executor', executor, '--store', db ? 'database' : 'memory', ...(executor === 'model' ? modelArgs : [])], refEnv(db));
      const tasks = !taskSkip && 'url' in refDb && 'url' in refModelDb;
      const [node, replyRef, modelReplyRef, taskRef, modelTaskRef] = await Promise.all([
        startJsonChild<A2aNodeInfo>(s, 'the platform node', 'a2a-node', [...modelArgs, '--model', model.model], nodeEnv, 120_000, true),
        reference('trivial', 'reply'),
        reference('model', 'reply'),
        tasks ? reference('trivial', 'task', refDb.url) : Promise.resolve(undefined),
        tasks ? reference('model', 'task', refModelDb.url) : Promise.resolve(undefined),
      ]);
      const refs = [replyRef, modelReplyRef, taskRef, modelTaskRef].filter((r) => r !== undefined);
      status(
        `a2a-send: platform node (pid ${node.pid}, ${node.driver}) at ${node.url}, agent host ${node.host}; SDK servers: ${refs.map((r) => `${r.executor} ${r.mode} (pid ${r.pid}, ${r.store} store) at ${r.url}`).join('; ')}`,
      );
      if (taskSkip) status(`a2a-send: the task comparisons are skipped: ${taskSkip}`);
      const storeNote = taskRef?.storeNote ?? modelTaskRef?.storeNote;
      if (storeNote) status(`a2a-send: ${storeNote}`);

      const ours = a2aLoadClient({ origin: node.url, host: node.host, headers: { authorization: `Bearer ${node.key}` } }, opts.concurrency);
      const client = (r: ReferenceInfo) => a2aLoadClient({ origin: r.url, host: new URL(r.url).host }, opts.concurrency);
      const refReply = client(replyRef);
      const refModelReply = client(modelReplyRef);
      const refTask = taskRef ? client(taskRef) : undefined;
      const refModelTask = modelTaskRef ? client(modelTaskRef) : undefined;
      s.defer('close the load clients', async () => {
        for (const c of [ours, refReply, refModelReply, refTask, refModelTask]) await c?.close();
      });

      // Every server serves its card; then one correct answer from each side before anything is measured.
      for (const [label, c] of [
        ['our agent gateway', ours],
        ['the SDK reference (trivial)', refReply],
        ['the SDK reference (model)', refModelReply],
      ] as const) {
        const card = await c.card();
        if (card.status !== 200 || typeof card.body?.name !== 'string') throw new SetupError(`a2a-send: ${label} serves no agent card at /.well-known/agent-card.json (HTTP ${card.status})`);
      }
      const wantRefReply: Expectation = { shape: 'message', text: REPLY_TEXT };
      // A bare reply is a Message in A2A; a runtime that wraps it in a completed Task still answers correctly (the
      // notes say which it was).
      const wantOurReply: Expectation = { shape: 'either', text: REPLY_TEXT };
      const wantTask: Expectation = { shape: 'task', text: TASK_TEXT };
      await preflight('the SDK reference (trivial reply)', refReply, REPLY_PROMPT, wantRefReply, false);
      await preflight('the SDK reference (model reply)', refModelReply, REPLY_PROMPT, wantRefReply, false);
      await preflight('our agent gateway (bare reply)', ours, REPLY_PROMPT, wantOurReply, true);
      if (refTask && refModelTask) {
        await preflight('the SDK reference (trivial task)', refTask, TASK_PROMPT, wantTask, false);
        await preflight('the SDK reference (model task)', refModelTask, TASK_PROMPT, wantTask, false);
        await preflight('our agent gateway (tool-calling task)', ours, TASK_PROMPT, wantTask, true);
      }

      // Ours answers each case twice (once beside each reference): its shapes are counted over both.
      const shapes = { ourReply: {}, ourTask: {} } as Record<'ourReply' | 'ourTask', Record<string, number>>;
      const ignored: Record<string, number> = {};
      const phase = (label: string, c: A2aLoadClient, prompt: string, want: Expectation, counted = ignored): Phase => ({ label, concurrency: opts.concurrency, call: caller(c, prompt, want, counted) });
      const storeLabel = (r: ReferenceInfo | undefined) => (r?.store === 'database' ? 'PostgreSQL (DatabaseTaskStore)' : 'in-memory task store');
      const OUR_REPLY = 'platform agent gateway, bare reply (scripted model)';
      const OUR_TASK = 'platform agent gateway, tool-calling task (scripted model, calc_add)';
      const pairs: Pair[] = [
        { ref: phase('@a2a-js/sdk server, reply executor', refReply, REPLY_PROMPT, wantRefReply), ours: phase(OUR_REPLY, ours, REPLY_PROMPT, wantOurReply, shapes.ourReply) },
        {
          ref: phase('@a2a-js/sdk server, model executor (scripted model via the AI SDK), reply', refModelReply, REPLY_PROMPT, wantRefReply),
          ours: phase(`${OUR_REPLY}, beside the model executor`, ours, REPLY_PROMPT, wantOurReply, shapes.ourReply),
        },
        ...(refTask && refModelTask
          ? [
              { ref: phase(`@a2a-js/sdk server, task executor, ${storeLabel(taskRef)}`, refTask, TASK_PROMPT, wantTask), ours: phase(OUR_TASK, ours, TASK_PROMPT, wantTask, shapes.ourTask) },
              {
                ref: phase(`@a2a-js/sdk server, model executor (scripted model via the AI SDK, calc_add as JS), task, ${storeLabel(modelTaskRef)}`, refModelTask, TASK_PROMPT, wantTask),
                ours: phase(`${OUR_TASK}, beside the model executor`, ours, TASK_PROMPT, wantTask, shapes.ourTask),
              },
            ]
          : []),
      ];
      const watch = [
        { label: 'node', pid: node.pid },
        ...refs.map((r) => ({ label: `sdk ${r.executor} ${r.mode}`, pid: r.pid })),
        { label: 'model', pid: model.pid },
        // Our thread writes and the references' task stores land here: its CPU is part of what each side costs.
        ...(node.driver === 'pg' ? [{ label: 'postgres', command: 'postgres' }] : []),
      ];
      const measured = await measure(
        'a2a-send',
        pairs.flatMap((p) => [p.ref, p.ours]),
        opts,
        watch,
      );

      // Wrong answers are not a slow server: a run with any of them reports nothing.
      const failed = measured.filter((m) => m.errors > 0);
      if (failed.length) {
        throw new Error(
          `a2a-send: ${failed.length} phase(s) had wrong answers or errors, so no comparison is reported:\n${failed
            .map((m) => `  ${m.label}: ${m.errors} of ${m.calls + m.errors} calls: ${Object.entries(m.errorKinds).map(([k, n]) => `${k} ×${n}`).join('; ')}`)
            .join('\n')}`,
        );
      }

      const compare = (ref: (typeof measured)[number], our: (typeof measured)[number], targeted: boolean): Row[] => {
        const tput = ratio(our.throughput, ref.throughput);
        const p99 = ratio(our.p99, ref.p99);
        return [
          { ...ref, role: 'reference' },
          {
            ...our,
            role: 'ours',
            vs: ref.label,
            targets: !targeted ? [] : [
              { description: `throughput ≥ ${TARGETS.minThroughputRatio.toFixed(1)}× the SDK server (${tput.toFixed(2)}×)`, met: tput >= TARGETS.minThroughputRatio },
              { description: `p99 ≤ ${TARGETS.maxP99Ratio}× the SDK server (${p99.toFixed(2)}×)`, met: p99 <= TARGETS.maxP99Ratio },
            ],
          },
        ];
      };
      // Pairs alternate: the trivial executor, then the model executor, for each variant.
      const rows = pairs.flatMap((_, i) => compare(measured[2 * i]!, measured[2 * i + 1]!, i % 2 === 1));

      const servers = refs.length;
      const notes = [
        `${servers + 2} processes besides the bench's: one \`platform\` node (${node.driver === 'pg' ? 'PostgreSQL' : 'PGlite'}, no NATS), ${servers} @a2a-js/sdk 1.3.0 servers (DefaultRequestHandler behind its Express JSON-RPC handler), one per executor and case, and the scripted model (bench/scripted-model.ts: the platform's scripted model server with the demo rules), which both sides call over loopback as the model service it would be in a deployment, so neither side under test spends its own CPU serving it. The load client (undici, one keep-alive connection per caller in flight, \`A2A-Version: 1.0\`) and every server share this machine's ${os.cpus().length} cores, so the numbers are noisy: compare ratios of the same run, not runs. Ours is measured right after each reference it is compared with.`,
        `Ours: host routing to \`${node.host.split(':')[0]}\`, API-key admission (the demo service principal), the JSON-RPC envelope, the agent runtime and the scripted model (\`${node.model}\`: the model process, configured as the operator provider \`bench\`) over its OpenAI-compatible wire through the AI SDK (\`ai\` 6, \`@ai-sdk/openai-compatible\`, with the platform's model client, undici's \`request\`, as the provider's fetch), the thread (user message and answer) persisted in the node's database; every call is a new context. The references admit anyone.`,
        'Two references. Trivial executor: it only publishes the events of an answer, no model and no tool, so its rows measure the gateway and agent runtime against nothing (the comparison the issue asks for, not a like-for-like one). Model executor: what an agent built on the SDK does: the reference calls the same scripted model process through the same AI SDK provider code (`languageModel` of runtime/models, with the WHATWG fetch the SDK uses by default, as an SDK agent has it), so its rows put the same model and tool work on both sides and measure what the platform adds (admission, persistence, the task runtime, the sandbox) against an SDK agent.',
        `(a) ${JSON.stringify(REPLY_PROMPT)} → ${JSON.stringify(REPLY_TEXT)}: the scripted model answers without a tool. The trivial reference publishes the text as one agent Message; the model reference makes one model call (\`generateText\`, non-streamed, as our first turn asks it: nobody watches a bare reply's chunks) with the user's text and publishes its text. No side stores a Message in a task store; ours writes its thread. ${shapeNote('Ours', shapes.ourReply)}`,
        refTask && modelTaskRef
          ? `(b) ${JSON.stringify(TASK_PROMPT)} → ${JSON.stringify(TASK_TEXT)}: the scripted model calls \`calc_add\` (ours: a WASM plugin bound to the measured agent, run in the sandbox, which offers the plugin's other two exports as tools too), then answers (ours asks that second turn whole, as the first: a blocking SendMessage has nobody watching its chunks; a streaming send streams it). The trivial reference publishes a Task, a working status, an artifact and a completed status; the model reference publishes the Task and a working status, runs \`generateText\` with \`calc_add\` as a JS function (\`stopWhen: stepCountIs(3)\`: two model calls, non-streamed), then the answer as an artifact and a completed status. Both into ${taskRef?.store === 'database' && modelTaskRef.store === 'database' ? "the SDK's DatabaseTaskStore on PostgreSQL (its own `a2a-db upgrade` schema, a pool of 10, a database of its own each)" : 'the SDK\'s task store named in the rows'}. ${shapeNote('Ours', shapes.ourTask)}`
          : `(b) The tool-calling task comparisons were skipped: ${taskSkip}.`,
        ...(storeNote ? [`The references' task store is not the one the issue names: ${storeNote}. Install \`kysely\` to compare against the SDK's PostgreSQL task store.`] : []),
        'Every answer was checked (shape, state, text) on every side, the references included: a run with any wrong answer or error fails instead of reporting.',
      ];
      return {
        title: 'A2A SendMessage: the agent gateway vs the @a2a-js/sdk server (trivial and model executors)',
        parameters: {
          ...runParameters(opts),
          'platform database': node.driver,
          'reference executors': 'trivial, model (scripted/demo via the AI SDK)',
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
