import { Type, type Static, type TSchema } from 'typebox';

/**
 * A2A 1.0's wire shapes (a2aproject/A2A v1.0.1 `specification/a2a.proto`, as ProtoJSON; spec §2 and §4.3), as
 * TypeBox schemas: the request params every method validates, the results the gateway checks before it answers,
 * and the agent card. Names are camelCase and enums are names: that is the one internal shape. What a client may
 * send besides (snake_case names, enum numbers, integers as strings, `null` for unset) is folded into it first by
 * protojson.ts, steered by the annotations below, which JSON Schema itself ignores:
 * - `protoEnum`: the enum's names by number, so `1` reads as `ROLE_USER`;
 * - `protoInt`: an integer ProtoJSON may also carry as a decimal string;
 * - `zeroUnset`: a proto3 scalar without presence, whose zero means "not set";
 * - `lowercase`: compared without case (push authentication schemes);
 * - `freeform`: a Struct or Value the client owns (metadata, data parts): taken as sent, names untouched;
 * - `oneof`: a field-presence union: exactly one of these members must be present.
 * Objects are closed: the normalizer drops members a schema does not name (a `tenant` among them) before checking.
 */

export const ROLE_NAMES = ['ROLE_UNSPECIFIED', 'ROLE_USER', 'ROLE_AGENT'] as const;
export const TASK_STATE_NAMES = [
  'TASK_STATE_UNSPECIFIED',
  'TASK_STATE_SUBMITTED',
  'TASK_STATE_WORKING',
  'TASK_STATE_COMPLETED',
  'TASK_STATE_FAILED',
  'TASK_STATE_CANCELED',
  'TASK_STATE_INPUT_REQUIRED',
  'TASK_STATE_REJECTED',
  'TASK_STATE_AUTH_REQUIRED',
] as const;
export type TaskState = Exclude<(typeof TASK_STATE_NAMES)[number], 'TASK_STATE_UNSPECIFIED'>;
export const TERMINAL_STATES: readonly TaskState[] = ['TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED', 'TASK_STATE_REJECTED'];

/** A proto enum: its accepted names; `protoEnum` lists every name by number, for clients that send numbers. */
const ProtoEnum = <const T extends readonly string[]>(names: readonly string[], accepted: T, description: string) =>
  Type.Unsafe<T[number]>({ type: 'string', enum: [...accepted], protoEnum: names, description });

const closed = <T extends Record<string, TSchema>>(properties: T, options: Record<string, unknown> = {}) => Type.Object(properties, { additionalProperties: false, ...options });

/**
 * Caps on what a message lists, so the cost of reading a request on the node's thread is bounded whatever the body
 * holds (A2A sets none; no real message comes near them). The runtime's messages are held to the same shape.
 */
export const MAX_PARTS = 1000;
const MAX_LIST = 100;

/** Ids become storage keys: never empty, never holding NUL (which no database text column keeps). */
const Id = (description: string) => Type.String({ minLength: 1, maxLength: 1024, pattern: '^[^\\u0000]*$', description });
const Int = (options: Record<string, unknown>) => Type.Integer({ protoInt: true, ...options });
/** google.protobuf.Struct: a JSON object the client owns. */
const Struct = (description: string) => Type.Record(Type.String(), Type.Unknown(), { freeform: true, description });
/** RFC 3339, as ProtoJSON writes a google.protobuf.Timestamp. */
const TIMESTAMP = '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,9})?(Z|[+-]\\d{2}:\\d{2})$';
const UTC_TIMESTAMP = '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,9})?Z$';

// Records (spec §2, A2A records) ---------------------------------------------------------------------------------

export const PartSchema = closed(
  {
    text: Type.Optional(Type.String()),
    // ProtoJSON bytes: standard or URL-safe base64, padded or not (the `byte` format, checked by protojson.ts).
    raw: Type.Optional(Type.String({ format: 'byte', description: 'Bytes, base64' })),
    url: Type.Optional(Type.String({ minLength: 1 })),
    data: Type.Optional(Type.Unknown({ freeform: true, description: 'Any JSON value' })),
    filename: Type.Optional(Type.String()),
    mediaType: Type.Optional(Type.String()),
    metadata: Type.Optional(Struct('Part metadata')),
  },
  { oneof: ['text', 'raw', 'url', 'data'] },
);
export type Part = Static<typeof PartSchema>;

export const MessageSchema = closed({
  messageId: Id('Sender-generated message id'),
  role: ProtoEnum(ROLE_NAMES, ['ROLE_USER', 'ROLE_AGENT'] as const, 'Who sent the message'),
  parts: Type.Array(PartSchema, { minItems: 1, maxItems: MAX_PARTS }),
  contextId: Type.Optional(Id('The platform thread id')),
  taskId: Type.Optional(Id('The task the message belongs to')),
  metadata: Type.Optional(Struct('Message metadata')),
  extensions: Type.Optional(Type.Array(Type.String(), { maxItems: MAX_LIST })),
  referenceTaskIds: Type.Optional(Type.Array(Id('A referenced task'), { maxItems: MAX_LIST })),
});
export type Message = Static<typeof MessageSchema>;

export const AuthenticationSchema = closed({
  scheme: Type.String({ lowercase: true, enum: ['bearer', 'basic'], description: '`bearer` or `basic`, compared without case' }),
  credentials: Type.Optional(Type.String()),
});

/** TaskPushNotificationConfig; `taskId` is optional only inline in SendMessage (the new task's id is used). */
const pushConfig = (taskId: TSchema) =>
  closed({
    taskId,
    url: Type.String({ minLength: 1, description: 'The webhook; HTTPS, no userinfo, a public host (checked by the runtime)' }),
    id: Type.Optional(Id('Config id, minted when omitted')),
    token: Type.Optional(Type.String()),
    authentication: Type.Optional(AuthenticationSchema),
  });
export const PushConfigSchema = pushConfig(Id('The task'));
export type PushConfig = Static<typeof PushConfigSchema>;

const TaskStatusSchema = closed({
  state: ProtoEnum(TASK_STATE_NAMES, TASK_STATE_NAMES.slice(1) as unknown as readonly TaskState[], 'The task state'),
  timestamp: Type.String({ pattern: UTC_TIMESTAMP, description: 'ISO 8601, UTC' }),
  message: Type.Optional(MessageSchema),
});

export const ArtifactSchema = closed({
  artifactId: Id('Artifact id'),
  name: Type.Optional(Type.String()),
  description: Type.Optional(Type.String()),
  parts: Type.Array(PartSchema, { minItems: 1 }),
  metadata: Type.Optional(Struct('Artifact metadata')),
  extensions: Type.Optional(Type.Array(Type.String())),
});

export const TaskSchema = closed({
  id: Id('Task id'),
  contextId: Id('The platform thread id'),
  status: TaskStatusSchema,
  artifacts: Type.Optional(Type.Array(ArtifactSchema)),
  history: Type.Optional(Type.Array(MessageSchema)),
  metadata: Type.Optional(Struct('Task metadata')),
});
export type Task = Static<typeof TaskSchema>;

// Request params (spec §4.3) --------------------------------------------------------------------------------------

const HistoryLength = Int({ minimum: 0, maximum: 2_147_483_647, description: 'Unset: server default; 0: no history; n: the last n messages' });

export const SendMessageParamsSchema = closed({
  message: MessageSchema,
  configuration: Type.Optional(
    closed({
      acceptedOutputModes: Type.Optional(Type.Array(Type.String(), { maxItems: MAX_LIST })),
      taskPushNotificationConfig: Type.Optional(pushConfig(Type.Optional(Id('The task')))),
      historyLength: Type.Optional(HistoryLength),
      returnImmediately: Type.Optional(Type.Boolean()),
    }),
  ),
  metadata: Type.Optional(Struct('Request metadata')),
});
export type SendMessageParams = Static<typeof SendMessageParamsSchema>;

export const GetTaskParamsSchema = closed({ id: Id('Task id'), historyLength: Type.Optional(HistoryLength) });
export type GetTaskParams = Static<typeof GetTaskParamsSchema>;

export const ListTasksParamsSchema = closed({
  contextId: Type.Optional(Id('Only tasks of this context')),
  status: Type.Optional(ProtoEnum(TASK_STATE_NAMES, TASK_STATE_NAMES.slice(1) as unknown as readonly TaskState[], 'Only tasks in this state (UNSPECIFIED: any)')),
  pageSize: Type.Optional(Int({ minimum: 1, maximum: 100, description: 'Default 50' })),
  pageToken: Type.Optional(Type.String()),
  historyLength: Type.Optional(HistoryLength),
  statusTimestampAfter: Type.Optional(Type.String({ pattern: TIMESTAMP, description: 'Inclusive' })),
  includeArtifacts: Type.Optional(Type.Boolean()),
});
export type ListTasksParams = Static<typeof ListTasksParamsSchema>;

export const CancelTaskParamsSchema = closed({ id: Id('Task id'), metadata: Type.Optional(Struct('Request metadata')) });
export type CancelTaskParams = Static<typeof CancelTaskParamsSchema>;

export const SubscribeToTaskParamsSchema = closed({ id: Id('Task id') });
export type SubscribeToTaskParams = Static<typeof SubscribeToTaskParamsSchema>;

export const PushConfigRefSchema = closed({ taskId: Id('The task'), id: Id('Config id') });
export type PushConfigRef = Static<typeof PushConfigRefSchema>;

export const ListPushConfigsParamsSchema = closed({
  taskId: Id('The task'),
  pageSize: Type.Optional(Int({ minimum: 1, maximum: 100, zeroUnset: true })),
  pageToken: Type.Optional(Type.String()),
});
export type ListPushConfigsParams = Static<typeof ListPushConfigsParamsSchema>;

/** GetExtendedAgentCard takes nothing but `tenant`, which is never read. */
export const EmptyParamsSchema = closed({});

// Results ---------------------------------------------------------------------------------------------------------

const one = <K extends string, T extends TSchema>(key: K, schema: T) => closed({ [key]: schema } as { [P in K]: T });

export const SendMessageResultSchema = Type.Union([one('task', TaskSchema), one('message', MessageSchema)]);
export type SendMessageResult = Static<typeof SendMessageResultSchema>;

export const StreamResponseSchema = Type.Union([
  one('task', TaskSchema),
  one('message', MessageSchema),
  one('statusUpdate', closed({ taskId: Id('Task id'), contextId: Id('Context id'), status: TaskStatusSchema, metadata: Type.Optional(Struct('Update metadata')) })),
  one(
    'artifactUpdate',
    closed({ taskId: Id('Task id'), contextId: Id('Context id'), artifact: ArtifactSchema, append: Type.Boolean(), lastChunk: Type.Boolean(), metadata: Type.Optional(Struct('Update metadata')) }),
  ),
]);
export type StreamResponse = Static<typeof StreamResponseSchema>;

export const ListTasksResultSchema = closed({ tasks: Type.Array(TaskSchema), nextPageToken: Type.String(), pageSize: Type.Integer({ minimum: 0 }), totalSize: Type.Integer({ minimum: 0 }) });
export type ListTasksResult = Static<typeof ListTasksResultSchema>;

export const ListPushConfigsResultSchema = closed({ configs: Type.Array(PushConfigSchema), nextPageToken: Type.Optional(Type.String()) });
export type ListPushConfigsResult = Static<typeof ListPushConfigsResultSchema>;

/** DeleteTaskPushNotificationConfig answers an empty result. */
export const EmptyResultSchema = closed({});

// Agent card (spec §4.3) -------------------------------------------------------------------------------------------

const AgentExtensionSchema = closed({ uri: Type.String(), description: Type.String(), required: Type.Boolean() });
export type AgentExtension = Static<typeof AgentExtensionSchema>;

export const AgentCardSchema = closed({
  name: Type.String(),
  description: Type.String(),
  supportedInterfaces: Type.Array(closed({ url: Type.String(), protocolBinding: Type.Literal('JSONRPC'), protocolVersion: Type.Literal('1.0') }), { minItems: 1 }),
  provider: closed({ organization: Type.String(), url: Type.String() }),
  version: Type.Literal('1.0.0'),
  capabilities: closed({ streaming: Type.Literal(true), pushNotifications: Type.Literal(true), extensions: Type.Array(AgentExtensionSchema) }),
  securitySchemes: closed({ bearer: closed({ httpAuthSecurityScheme: closed({ scheme: Type.Literal('Bearer'), description: Type.String() }) }) }),
  /** The spec's form (`[{bearer: []}]`), not ProtoJSON's `[{schemes: {bearer: {list: []}}}]`: decided, see the README. */
  securityRequirements: Type.Array(Type.Record(Type.String(), Type.Array(Type.String()))),
  defaultInputModes: Type.Array(Type.String()),
  defaultOutputModes: Type.Array(Type.String()),
  skills: Type.Array(Type.Never()),
});
export type AgentCard = Static<typeof AgentCardSchema>;
