import type { Static, TSchema } from 'typebox';
import { PlatformError } from '../../runtime/index.ts';
import type { A2aBackend, A2aCallContext } from './backend.ts';
import { checkResult, readParams } from './protojson.ts';
import {
  AgentCardSchema,
  CancelTaskParamsSchema,
  EmptyParamsSchema,
  EmptyResultSchema,
  GetTaskParamsSchema,
  ListPushConfigsParamsSchema,
  ListPushConfigsResultSchema,
  ListTasksParamsSchema,
  ListTasksResultSchema,
  PushConfigRefSchema,
  PushConfigSchema,
  SendMessageParamsSchema,
  SendMessageResultSchema,
  StreamResponseSchema,
  SubscribeToTaskParamsSchema,
  TaskSchema,
  TERMINAL_STATES,
  type AgentCard,
  type StreamResponse,
  type TaskState,
} from './schemas.ts';

/**
 * The eleven A2A 1.0 methods (spec §4.3, §9): exactly these PascalCase names, nothing else — the 0.x slash names
 * (`message/send`, `tasks/get`, ...) have no aliases. Each names its params schema and, for the unary methods, the
 * schema its result must pass before it is sent.
 */
export const METHODS = {
  SendMessage: { params: SendMessageParamsSchema, result: SendMessageResultSchema },
  SendStreamingMessage: { params: SendMessageParamsSchema, stream: true },
  GetTask: { params: GetTaskParamsSchema, result: TaskSchema },
  ListTasks: { params: ListTasksParamsSchema, result: ListTasksResultSchema },
  CancelTask: { params: CancelTaskParamsSchema, result: TaskSchema },
  SubscribeToTask: { params: SubscribeToTaskParamsSchema, stream: true },
  CreateTaskPushNotificationConfig: { params: PushConfigSchema, result: PushConfigSchema },
  GetTaskPushNotificationConfig: { params: PushConfigRefSchema, result: PushConfigSchema },
  ListTaskPushNotificationConfigs: { params: ListPushConfigsParamsSchema, result: ListPushConfigsResultSchema },
  DeleteTaskPushNotificationConfig: { params: PushConfigRefSchema, result: EmptyResultSchema },
  GetExtendedAgentCard: { params: EmptyParamsSchema, result: AgentCardSchema },
} as const satisfies Record<string, { params: TSchema; result?: TSchema; stream?: true }>;

export type MethodName = keyof typeof METHODS;
export const METHOD_NAMES = Object.keys(METHODS) as MethodName[];

export const isMethod = (name: string): name is MethodName => Object.hasOwn(METHODS, name);

/** The method a request names, or -32601. */
export function methodOf(name: string): MethodName {
  if (isMethod(name)) return name;
  const hint = name.includes('/') ? ': A2A 1.0 names are PascalCase (SendMessage, GetTask, ...); the 0.x slash names are not served' : '';
  throw new PlatformError('A2A_METHOD_NOT_FOUND', `Method not found: ${JSON.stringify(name.slice(0, 100))}${hint}`);
}

export type Outcome = { kind: 'result'; result: unknown } | { kind: 'stream'; events: AsyncIterable<StreamResponse> };

/**
 * Until the agent runtime is wired in, a node serves the card (and GetExtendedAgentCard) but no task methods: each
 * answers A2A's UnsupportedOperation, after its params were checked like any other call.
 */
const NO_RUNTIME = 'this agent gateway has no agent runtime yet: task and push-config methods arrive with it';

/** A frame of a stream after which nothing more may follow (A2A-STREAM-11: the stream ends at a terminal state). */
export function endsStream(event: StreamResponse, first: boolean): boolean {
  const terminal = (s: TaskState) => TERMINAL_STATES.includes(s);
  if ('message' in event) return first;
  if ('task' in event) return terminal(event.task.status.state);
  if ('statusUpdate' in event) return terminal(event.statusUpdate.status.state);
  return false;
}

/** A result the runtime produced, checked against its wire schema: a wrong shape is -32006, never sent. */
export function checked(schema: TSchema, value: unknown, what: string, log: (problem: string) => void): unknown {
  const r = checkResult(schema, value);
  if (r.ok) return value;
  log(`${what}: ${r.problem}`);
  throw new PlatformError('A2A_INVALID_AGENT_RESPONSE', `Invalid agent response: the ${what} is not a valid A2A 1.0 shape`);
}

export const checkFrame = (event: unknown, log: (problem: string) => void) => checked(StreamResponseSchema, event, 'stream response', log) as StreamResponse;

type TaskMethod = Exclude<MethodName, 'GetExtendedAgentCard'>;
type ParamsOf<M extends MethodName> = Static<(typeof METHODS)[M]['params']>;
const result = (r: unknown): Outcome => ({ kind: 'result', result: r });

/** How each task method reaches the backend, typed by its params schema. */
const CALLS: { [M in TaskMethod]: (b: A2aBackend, params: ParamsOf<M>, ctx: A2aCallContext) => Promise<Outcome> } = {
  SendMessage: async (b, p, ctx) => result(await b.sendMessage(p, ctx)),
  SendStreamingMessage: async (b, p, ctx) => ({ kind: 'stream', events: b.sendStreamingMessage(p, ctx) }),
  GetTask: async (b, p, ctx) => result(await b.getTask(p, ctx)),
  ListTasks: async (b, p, ctx) => result(await b.listTasks(p, ctx)),
  CancelTask: async (b, p, ctx) => result(await b.cancelTask(p, ctx)),
  SubscribeToTask: async (b, p, ctx) => ({ kind: 'stream', events: b.subscribeToTask(p, ctx) }),
  CreateTaskPushNotificationConfig: async (b, p, ctx) => result(await b.createPushConfig(p, ctx)),
  GetTaskPushNotificationConfig: async (b, p, ctx) => result(await b.getPushConfig(p, ctx)),
  ListTaskPushNotificationConfigs: async (b, p, ctx) => result(await b.listPushConfigs(p, ctx)),
  DeleteTaskPushNotificationConfig: async (b, p, ctx) => (await b.deletePushConfig(p, ctx), result({})),
};

/** Reads a method's params and runs it against the backend (or answers it at the edge: the card, no runtime). */
export async function runMethod(
  method: MethodName,
  rawParams: unknown,
  ctx: A2aCallContext,
  /** `base64`: long strings of the params already found to be base64 (see readParams). */
  deps: { backend: A2aBackend | undefined; card: AgentCard; base64?: readonly string[] },
): Promise<Outcome> {
  const params = readParams(METHODS[method].params, rawParams, deps.base64 ? { base64: deps.base64 } : {});
  const b = deps.backend;
  if (method === 'GetExtendedAgentCard') return result(b?.getExtendedAgentCard ? await b.getExtendedAgentCard(ctx) : deps.card);
  if (!b) throw new PlatformError('A2A_UNSUPPORTED_OPERATION', `Unsupported operation: ${method}: ${NO_RUNTIME}`);
  // The params were read with this method's own schema: the table's entry for it takes exactly that shape.
  return (CALLS[method] as (b: A2aBackend, p: unknown, ctx: A2aCallContext) => Promise<Outcome>)(b, params, ctx);
}
