// The reference of the a2a-send bench (run by bench/a2a-reference-server.ts as a process of its own; a2a-send's test
// starts it in-process): the official @a2a-js/sdk server (DefaultRequestHandler behind its Express JSON-RPC handler,
// the agent card at /.well-known/agent-card.json) with one of two executors:
//   executor trivial (the default) only publishes events, no model at all:
//     mode reply  one agent Message (a bare reply);
//     mode task   a Task, a working status, an artifact and a completed status.
//   executor model is what an agent built on the SDK does: it calls the platform's scripted model with the demo agent's
//   rules (runtime/models/demo-rules.yaml) through the same AI SDK provider code the platform uses (`languageModel`,
//   @ai-sdk/openai-compatible) — at modelUrl when given (the bench runs the model as a process of its own,
//   bench/scripted-model.ts), else served by this process on loopback:
//     mode reply  one model call with the user's text, no tools (generateText, non-streamed, as the platform asks a
//                 turn nobody watches);
//                 its text is the agent Message;
//     mode task   a Task (submitted) and a working status, then generateText with `calc_add` as a JS tool (up to
//                 three steps), then the final text as an artifact and a completed status.
// store memory keeps tasks in the SDK's InMemoryTaskStore; store database in its DatabaseTaskStore on the PostgreSQL
// of databaseUrl (the SDK's own `a2a-db upgrade` creates the table first). DatabaseTaskStore needs the `kysely`
// package: without it the server falls back to the in-memory store and says so (storeNote).
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { generateText, jsonSchema, stepCountIs, tool, type LanguageModel } from 'ai';
import { A2A_PROTOCOL_VERSION, AGENT_CARD_PATH, Role, TaskState, type AgentCard, type Part } from '@a2a-js/sdk';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore, type AgentExecutor, type TaskStore } from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import { DEMO_RULES_FILE, languageModel, parseRules, serveScripted } from '../runtime/index.ts';

export type ReferenceMode = 'reply' | 'task';
export type ReferenceStore = 'memory' | 'database';
/** `trivial`: events only, no model (the gateway's overhead against nothing); `model`: the scripted model and the tool. */
export type ReferenceExecutor = 'trivial' | 'model';

/** What the reference answers: the same texts the demo agent's scripted model gives to the bench's two messages. */
export const REFERENCE_REPLY_TEXT = process.env.BENCH_A2A_REPLY ?? 'hello from the bench';
export const REFERENCE_TASK_TEXT = process.env.BENCH_A2A_TASK_RESULT ?? 'The sum is 42.';

/** Pool size of the database store: node-postgres' default, as the platform's own pool. */
const POOL_SIZE = 10;

const text = (value: string): Part => ({ content: { $case: 'text', value }, metadata: undefined, filename: '', mediaType: 'text/plain' });

type Bus = Parameters<AgentExecutor['execute']>[1];
type Ctx = Parameters<AgentExecutor['execute']>[0];

/** A bare reply: one agent Message (both executors end a reply this way). */
function publishReply(bus: Bus, contextId: string, said: string) {
  bus.publish(
    AgentEvent.message({ messageId: randomUUID(), contextId, taskId: '', role: Role.ROLE_AGENT, parts: [text(said)], metadata: undefined, extensions: [], referenceTaskIds: [] }),
  );
}

/** A task's opening: the Task (submitted, with the user's message) and its working status. */
function publishTaskStart(bus: Bus, ctx: Ctx, now: () => string) {
  const { taskId, contextId } = ctx;
  bus.publish(AgentEvent.task({ id: taskId, contextId, status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: now() }, artifacts: [], history: [ctx.userMessage], metadata: undefined }));
  bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: now() }, metadata: undefined }));
}

/** The trivial executor: no model, no tool, only the events an agent publishes for a reply or a task. */
export function referenceExecutor(mode: ReferenceMode): AgentExecutor {
  return {
    async execute(ctx, bus) {
      const { taskId, contextId } = ctx;
      if (mode === 'reply') {
        publishReply(bus, contextId, REFERENCE_REPLY_TEXT);
        return;
      }
      const now = () => new Date().toISOString();
      publishTaskStart(bus, ctx, now);
      bus.publish(
        AgentEvent.artifactUpdate({
          taskId,
          contextId,
          artifact: { artifactId: randomUUID(), name: 'answer', description: '', parts: [text(REFERENCE_TASK_TEXT)], metadata: undefined, extensions: [] },
          append: false,
          lastChunk: true,
          metadata: undefined,
        }),
      );
      bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: { state: TaskState.TASK_STATE_COMPLETED, message: undefined, timestamp: now() }, metadata: undefined }));
      // The request handler settles the bus once this returns: a terminal state closes it.
    },
    async cancelTask() {},
  };
}

/** The text parts of the user's message, joined: what the model is asked. */
const userText = (m: { parts: Part[] }) =>
  m.parts
    .map((p) => (p.content?.$case === 'text' ? p.content.value : ''))
    .filter(Boolean)
    .join('\n');

/** `calc_add` as an SDK agent defines it: a JS function, with the input schema the calc plugin declares. */
const calcAdd = tool({
  description: 'Adds two integers.',
  inputSchema: jsonSchema<{ a: number; b: number }>({ type: 'object', properties: { a: { type: 'integer' }, b: { type: 'integer' } }, required: ['a', 'b'] }),
  execute: async ({ a, b }) => a + b,
});

/**
 * The model executor: what an agent built on the SDK does with a model behind an OpenAI-compatible endpoint. A reply
 * is one model call (whole, as the platform asks a bare reply); a task calls the model with `calc_add` until it
 * answers, then publishes the answer as an artifact. Retries as the platform's (one). A model that fails ends a task
 * as failed (a reply's failure is thrown: the SDK answers it as a failed task).
 */
export function modelExecutor(mode: ReferenceMode, model: LanguageModel): AgentExecutor {
  return {
    async execute(ctx, bus) {
      const { taskId, contextId } = ctx;
      const prompt = userText(ctx.userMessage);
      if (mode === 'reply') {
        const said = (await generateText({ model, prompt, maxRetries: 1 })).text;
        publishReply(bus, contextId, said);
        return;
      }
      const now = () => new Date().toISOString();
      publishTaskStart(bus, ctx, now);
      let answer: string;
      try {
        answer = (await generateText({ model, prompt, tools: { calc_add: calcAdd }, stopWhen: stepCountIs(3), maxRetries: 1 })).text;
      } catch (err) {
        const why = {
          messageId: randomUUID(),
          contextId,
          taskId,
          role: Role.ROLE_AGENT,
          parts: [text(`the model failed: ${err instanceof Error ? err.message : String(err)}`)],
          metadata: undefined,
          extensions: [],
          referenceTaskIds: [],
        };
        bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: { state: TaskState.TASK_STATE_FAILED, message: why, timestamp: now() }, metadata: undefined }));
        return;
      }
      bus.publish(
        AgentEvent.artifactUpdate({
          taskId,
          contextId,
          artifact: { artifactId: randomUUID(), name: 'answer', description: '', parts: [text(answer)], metadata: undefined, extensions: [] },
          append: false,
          lastChunk: true,
          metadata: undefined,
        }),
      );
      bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: { state: TaskState.TASK_STATE_COMPLETED, message: undefined, timestamp: now() }, metadata: undefined }));
    },
    async cancelTask() {},
  };
}

/**
 * The AI SDK's model of the demo agent's scripted model (built once, as the platform does): the one at `modelUrl`, or
 * one this process serves on loopback.
 */
async function scriptedModel(modelUrl?: string): Promise<{ model: LanguageModel; close(): Promise<void> }> {
  const rules = parseRules(await readFile(DEMO_RULES_FILE, 'utf8'));
  if (modelUrl) return { model: languageModel({ provider: 'scripted', baseUrl: modelUrl }, rules.name), close: async () => {} };
  const server = await serveScripted(rules);
  return { model: languageModel({ provider: 'scripted', baseUrl: server.baseUrl }, rules.name), close: () => server.close() };
}

function card(url: string, mode: ReferenceMode, executor: ReferenceExecutor): AgentCard {
  return {
    name: `Bench reference (${executor}, ${mode})`,
    description:
      executor === 'model'
        ? "The @a2a-js/sdk reference of the a2a-send bench: the demo agent's scripted model through the AI SDK, calc_add as a JS tool"
        : 'The @a2a-js/sdk reference of the a2a-send bench: a trivial executor, no model',
    supportedInterfaces: [{ url, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: A2A_PROTOCOL_VERSION }],
    provider: undefined,
    version: '1.0.0',
    capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: false },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [{ id: 'bench', name: 'Bench', description: mode === 'reply' ? 'Answers with one message' : 'Runs a task to completion', tags: ['bench'], examples: [], inputModes: [], outputModes: [], securityRequirements: [] }],
    signatures: [],
  };
}

/** Loads `kysely` by a computed name: it is an optional peer of the SDK, and not one of the platform's packages. */
async function loadKysely(): Promise<any | null> {
  const name = 'kysely';
  try {
    return await import(name);
  } catch {
    return null;
  }
}

/** The SDK's DatabaseTaskStore on `databaseUrl`, its table created by the SDK's own migration tool first. */
async function databaseStore(databaseUrl: string): Promise<{ store: TaskStore; close(): Promise<void> } | { why: string }> {
  const kysely = await loadKysely();
  if (!kysely) return { why: 'the SDK\'s DatabaseTaskStore needs the "kysely" package (an optional peer of @a2a-js/sdk), which is not installed: the in-memory task store serves instead' };
  const sdkEntry = fileURLToPath(import.meta.resolve('@a2a-js/sdk'));
  const cli = new URL('./cli/a2a_db.js', `file://${sdkEntry}`).pathname;
  const migrate = spawnSync(process.execPath, [cli, 'upgrade', '--store', 'tasks', '--url', databaseUrl], { encoding: 'utf8' });
  if (migrate.status !== 0) throw new Error(`a2a-db upgrade failed (${migrate.status}): ${migrate.stderr || migrate.stdout}`);
  const pool = new pg.Pool({ connectionString: databaseUrl, max: POOL_SIZE });
  const db = new kysely.Kysely({ dialect: new kysely.PostgresDialect({ pool }) });
  const { DatabaseTaskStore } = await import('@a2a-js/sdk/server/database');
  return { store: new DatabaseTaskStore(db), close: () => db.destroy() };
}

// Express is not one of the platform's own packages (nor are its types): it comes with the MCP SDK, which the mcp-call
// bench uses, and it is what @a2a-js/sdk's server handlers are written for. Loaded untyped, used for three calls.
interface ExpressApp {
  (req: http.IncomingMessage, res: http.ServerResponse): void;
  use(...handlers: unknown[]): void;
}

export async function startReference(opts: { mode: ReferenceMode; store: ReferenceStore; executor?: ReferenceExecutor; databaseUrl?: string; modelUrl?: string }) {
  const executor = opts.executor ?? 'trivial';
  const express = createRequire(import.meta.url)('express') as () => ExpressApp;
  let taskStore: TaskStore = new InMemoryTaskStore();
  let closeStore = async () => {};
  let store: ReferenceStore = 'memory';
  let storeNote: string | undefined;
  if (opts.store === 'database') {
    if (!opts.databaseUrl) throw new Error('--store database needs DATABASE_URL');
    const d = await databaseStore(opts.databaseUrl);
    if ('why' in d) storeNote = d.why;
    else {
      taskStore = d.store;
      closeStore = d.close;
      store = 'database';
    }
  }
  const scripted = executor === 'model' ? await scriptedModel(opts.modelUrl) : undefined;
  const app = express();
  const server = http.createServer(app);
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const requestHandler = new DefaultRequestHandler(card(url, opts.mode, executor), taskStore, scripted ? modelExecutor(opts.mode, scripted.model) : referenceExecutor(opts.mode));
  app.use(`/${AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: requestHandler }));
  app.use(jsonRpcHandler({ requestHandler, userBuilder: UserBuilder.noAuthentication }));
  return {
    url,
    executor,
    store,
    storeNote,
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      await scripted?.close();
      await closeStore();
    },
  };
}
