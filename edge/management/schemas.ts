import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyBaseLogger, FastifyInstance, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify';
import { Type, type Static, type TSchema } from 'typebox';
import { statechartKinds } from '../../runtime/index.ts';
import { PATTERNS } from './validation.ts';

/**
 * The management API's wire shapes (spec §2 and §4.1), as TypeBox schemas: fastify validates requests and serializes
 * answers with them, the handlers' types are derived from them, and the OpenAPI document is generated from them.
 * Field names are the spec's; a shape the spec leaves open is the one the platform sends.
 */

/** The management app, typed by its schemas: a handler's request and reply types come from its route's schema. */
export type ManagementApp = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, TypeBoxTypeProvider>;

/** A named component of the document (`#/components/schemas/<$id>`), referenced where it is used. */
export const component = <T extends TSchema>(schema: T) => Type.Unsafe<Static<T>>(Type.Ref((schema as { $id?: string }).$id!));

/** The `data` envelope of `/v1` answers (the two OAuth routes answer bare). */
export const data = <T extends TSchema>(schema: T, description: string) => Type.Object({ data: schema }, { description });

// The pattern is what is checked: the `uuid` format alone would also admit a `urn:uuid:` prefix.
export const Uuid = (description: string) => Type.String({ format: 'uuid', pattern: PATTERNS.uuid.pattern, description });
const NO_NUL = PATTERNS.noNul.pattern;
export const Timestamp = (description: string) => Type.String({ format: 'date-time', description: `${description} (ISO 8601, UTC)` });
export const Text = (maxLength: number, description: string) => Type.String({ maxLength, pattern: NO_NUL, description });

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;
const MAX_OFFSET = 1_000_000;
export const CAPABILITY_TYPES = ['plugin', 'builtin', 'connector'] as const;
const VERSION_STATES = ['dormant', 'activating', 'active', 'superseded'];

// Capability (spec §2) ------------------------------------------------------------------------------------------

const allow = <T extends TSchema>(rule: T) => Type.Object({ allow: Type.Array(rule) });

const PluginVersion = Type.Object({
  version_number: Type.Integer({ minimum: 1 }),
  status: Type.String({ enum: VERSION_STATES, description: 'Lifecycle of the version: it serves once `active` (an extension of the spec).' }),
  status_reason: Type.Union([Type.String(), Type.Null()], { description: 'Why the last activation failed, or null.' }),
  created_at: Timestamp('When the version was uploaded'),
  created_by: Type.String({ description: 'UUID of the principal who uploaded it.' }),
  tools: Type.Array(Type.Object({ name: Type.String(), description: Type.String() })),
  metadata: Type.Object({ author: Type.String(), license: Type.String(), tags: Type.Array(Type.String()), homepage: Type.String() }),
  permissions: Type.Object({
    network: Type.Optional(allow(Type.Object({ host: Type.String() }))),
    filesystem: Type.Optional(allow(Type.Object({ uri: Type.String({ description: 'Pattern of paths in the workspace, `fs://...`.' }), access: Type.Array(Type.String({ enum: ['read', 'write'] })) }))),
    environment: Type.Optional(allow(Type.Object({ key: Type.String() }))),
  }),
  resources: Type.Object({ limits: Type.Optional(Type.Object({ memory: Type.String({ examples: ['64Mi'] }), timeout: Type.String({ examples: ['5s'] }) })) }),
});
export type PluginVersionWire = Static<typeof PluginVersion>;

const PluginSpecifications = Type.Object(
  { type: Type.Enum(CAPABILITY_TYPES), active_version: Type.Integer({ minimum: 0 }), versions: Type.Array(PluginVersion) },
  { $id: 'PluginSpecifications', description: 'Of a plugin (or connector): its versions.' },
);
const BuiltinSpecifications = Type.Object(
  {
    type: Type.Literal('builtin'),
    kind: Type.String({ description: 'Files, Memory, Code Runner, ...' }),
    sort_order: Type.Integer(),
    config: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
    tools: Type.Array(Type.Object({ name: Type.String(), description: Type.String() }), { description: 'The tools it gives a gateway or agent it is bound to (an extension of the spec).' }),
  },
  { $id: 'BuiltinSpecifications', description: 'Of a built-in (spec §2).' },
);

const ConnectorSpecifications = Type.Object(
  {
    type: Type.Literal('connector'),
    kind: Type.String({ enum: ['rest', 'custom-mcp', 'mcp-registry'], description: 'A REST API from its OpenAPI document, a custom MCP server, or a server picked from an MCP registry.' }),
    url: Type.String({ description: 'The API\'s base URL or the MCP server\'s URL, without query or credentials.' }),
    source: Type.Union([Type.Object({ registry: Type.String(), server: Type.String(), version: Type.String() }), Type.Null()], { description: 'Where a registry connector came from, else null.' }),
    ttl_seconds: Type.Integer({ description: 'How long a node keeps an MCP server\'s tool list before listing it again.' }),
    tools: Type.Array(Type.Object({ name: Type.String(), description: Type.String() }), {
      description: 'Its operations (REST), or the tools the MCP server listed when the connector was made (the surfaces list it live).',
    }),
  },
  { $id: 'ConnectorSpecifications', description: 'Of a connector (an extension of the spec, which does not show it).' },
);

export const CapabilitySchema = Type.Object(
  {
    id: Type.String({ description: 'UUID for plugins; a fixed string id for built-ins.' }),
    account_id: Type.Optional(Uuid('The owning account (plugins and connectors; built-ins belong to the platform).')),
    name: Type.String(),
    description: Type.String(),
    namespace: Type.String({ description: 'Unique per account; the prefix of MCP tool names.' }),
    type: Type.Enum(CAPABILITY_TYPES),
    is_active: Type.Boolean(),
    active_version: Type.Integer({ minimum: 0, description: '0 means no activated version.' }),
    logo_url: Type.String(),
    specifications: Type.Union([component(PluginSpecifications), component(BuiltinSpecifications), component(ConnectorSpecifications)]),
    audit_info: Type.Object({
      created_at: Timestamp('Creation time'),
      created_by: Type.String({ description: 'UUID of the creating principal.' }),
      updated_at: Timestamp('Last change'),
      updated_by: Type.String({ description: 'UUID of the principal of the last change.' }),
    }),
  },
  { $id: 'Capability', description: 'A plugin, built-in or connector of the account (spec §2).' },
);
export type CapabilityWire = Static<typeof CapabilitySchema>;

export const CapabilityListQuery = Type.Object({
  type: Type.Optional(Type.Enum(CAPABILITY_TYPES, { description: 'Only capabilities of this type.' })),
  namespace: Type.Optional(Text(200, 'Only the capability with this namespace.')),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT, description: 'Page size.' })),
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_OFFSET, default: 0, description: 'Capabilities to skip.' })),
  search: Type.Optional(Text(200, 'Case-insensitive substring of the name or description; wildcards are taken literally.')),
});

export const CapabilityList = data(
  Type.Object({ capabilities: Type.Array(component(CapabilitySchema)), total: Type.Integer({ minimum: 0 }), limit: Type.Integer(), offset: Type.Integer() }),
  'One page of the capabilities, and how many match in all.',
);

export const CapabilityPath = Type.Object({
  id: Type.Union([Uuid('A plugin or connector id.'), Type.String({ pattern: '^builtin-[a-z0-9-]{1,60}$', description: 'A built-in id.' })], { description: 'The capability id.' }),
});
export const OneCapability = data(component(CapabilitySchema), 'The capability.');

export const VersionPath = Type.Object({ id: Uuid('The capability id.'), version: Type.Integer({ minimum: 1, maximum: 999_999_999, description: 'The version number.' }) });
export const ActivationResult = data(
  Type.Object({ capability_id: Uuid('The capability id.'), active_version: Type.Integer({ minimum: 1 }) }),
  'The version is active: it serves every new call.',
);

// Plugin upload (spec §2, §4.1) -----------------------------------------------------------------------------------

export const UploadForm = Type.Object({
  archive: Type.String({ format: 'binary', description: 'The plugin as an `.npack` (gzip-compressed tar): file name ending `.npack`, non-empty.' }),
});

export const UploadResultSchema = Type.Object(
  {
    capability_id: Uuid('The plugin capability.'),
    capability_name: Type.String({ description: 'The resolved plugin name.' }),
    version: Type.Integer({ minimum: 1, description: 'The new version; it activates by itself.' }),
    files_processed: Type.Array(Type.String({ enum: ['wasm', 'platform', 'env', 'wit'] }), { description: 'Entry kinds found, in this order: `wasm` always, then `platform`, `env`, `wit` when present.' }),
    schema_warnings: Type.Optional(Type.Array(Type.String(), { description: 'Non-fatal tool-schema warnings; omitted when empty.' })),
  },
  { $id: 'PluginUploadResult', description: 'The registered plugin version (spec §2).' },
);
export const UploadResult = data(component(UploadResultSchema), 'The plugin version is registered and activating.');

// Device authorization grant (spec §2, §4.1, §5) -----------------------------------------------------------------

const ClientId = Type.String({ pattern: PATTERNS.clientId.pattern, description: 'The client id: 1 to 200 visible ASCII characters.' });

export const DeviceAuthorizationRequest = Type.Object({ client_id: ClientId });

export const DeviceAuthorizationSchema = Type.Object(
  {
    device_code: Type.String({ description: 'Send it as `code` to /oauth/token.' }),
    user_code: Type.String({ description: 'What the human enters at verification_uri.', examples: ['BCDF-GHJK'] }),
    verification_uri: Type.String(),
    verification_uri_complete: Type.String(),
    expires_in: Type.Integer({ description: 'Seconds until the codes expire.' }),
    interval: Type.Integer({ description: 'Seconds to wait between polls of /oauth/token.' }),
  },
  { $id: 'DeviceAuthorization', description: 'A started device authorization (bare, not wrapped in `data`).' },
);

export const TokenRequest = Type.Object({
  grant_type: Type.String({ minLength: 1, description: 'Only `urn:ietf:params:oauth:grant-type:device_code` is granted; any other answers 400.' }),
  code: Type.String({ minLength: 1, description: 'The `device_code` from /oauth/device/authorize.' }),
  client_id: ClientId,
});

export const TokenResponseSchema = Type.Object(
  {
    access_token: Type.String({ description: 'An HS256 JWT.' }),
    token_type: Type.Literal('Bearer'),
    expires_in: Type.Integer({ description: 'Seconds (3600).' }),
    scope: Type.String(),
  },
  { $id: 'TokenResponse', description: 'The token response (spec §2); there is no refresh token.' },
);

// Platform --------------------------------------------------------------------------------------------------------

export const CliConfig = data(
  Type.Object({
    api_base_url: Type.String(),
    domain: Type.String(),
    client_id: Type.String({ description: 'The client id the CLI uses in the device flow.' }),
    device_authorization_endpoint: Type.String(),
    token_endpoint: Type.String(),
    verification_uri: Type.String(),
    poll_interval_seconds: Type.Integer(),
    device_code_ttl_seconds: Type.Integer(),
    access_token_ttl_seconds: Type.Integer(),
    mcp_host_template: Type.String({ description: 'An MCP gateway origin, with `{handle}` to fill in.' }),
    agent_host_template: Type.String({ description: 'An agent gateway origin, with `{handle}` to fill in.' }),
  }),
  'What the CLI needs to log in and to reach the gateways.',
);

export const Healthy = Type.Object({ status: Type.Literal('ok') }, { description: 'The process is up.' });
export const Ready = Type.Object({ status: Type.Literal('ready') }, { description: 'The node serves: it is not draining and its database answers.' });

// Statechart viewer -----------------------------------------------------------------------------------------------

export const MachinePath = Type.Object({ kind: Type.String({ enum: statechartKinds(), description: 'A statechart kind.' }) });
export const Machine = data(Type.Object({ kind: Type.String(), svg: Type.String({ description: 'Graphviz SVG, labels escaped.' }), dot: Type.String() }), 'The statechart drawn.');

export const WatchRequest = Type.Object({ address: Type.String({ maxLength: 300, pattern: NO_NUL, description: 'An actor address, `kind/accountId/id`.' }) });
export const WatchFrame = Type.Object(
  {
    address: Type.String(),
    value: Type.Unknown({ description: 'The state value.' }),
    activeStateIds: Type.Array(Type.String()),
    event: Type.Optional(Type.Object({ type: Type.String() }, { description: 'The event that caused the transition; absent on the first frame.' })),
    at: Type.Integer({ description: 'Milliseconds since the epoch.' }),
  },
  { description: 'One `data:` line per transition; never the context or the event payload.' },
);

// Operator channel (not part of the tenant API: hidden from the document) ----------------------------------------

export const OperatorCommand = Type.Object({
  command: Type.String({ minLength: 1, maxLength: 100, pattern: NO_NUL }),
  params: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
});

// Approval gates (spec §1: list pending for a thread, a workflow run or the account; submit a decision) ---------

export const GATE_STATES = ['pending', 'approved', 'denied', 'expired'] as const;
const GateSchema = Type.Object(
  {
    id: Type.String({ description: 'The gate id (the `gateId` of its `platform.gate_decision` payload).' }),
    state: Type.Enum(GATE_STATES, { description: 'pending until a decision or the expiry; every other state is final.' }),
    agent_id: Type.Union([Uuid('The agent whose run waits.'), Type.Null()], { description: 'The agent whose task waits; null for a gate of a workflow run.' }),
    task_id: Type.String({ description: 'The A2A task that waits on the gate.' }),
    context_id: Type.String({ description: 'The thread (A2A contextId) of the task.' }),
    workflow_run_id: Type.Union([Type.String(), Type.Null()], { description: 'The workflow run that waits, when a workflow opened the gate.' }),
    owner_id: Type.String({ description: 'The principal whose run it is.' }),
    tool: Type.String({ description: 'The tool the call would run.' }),
    tool_call_id: Type.String(),
    arguments: Type.Unknown({ description: 'The exact arguments of the call.' }),
    arguments_hash: Type.String({ description: '`sha256:<hex>` of the arguments in canonical JSON: a decision names it.' }),
    opened_at: Timestamp('When the call asked'),
    expires_at: Timestamp('When the gate expires (a denial) unless decided'),
    decided_at: Type.Union([Timestamp('When it was decided or expired'), Type.Null()]),
    decided_by: Type.Union([Type.String({ description: 'The principal who decided.' }), Type.Null()]),
  },
  { $id: 'ApprovalGate', description: 'One human decision on one tool call an autonomy policy sent to `ask`.' },
);
export type GateWire = Static<typeof GateSchema>;

export const GateListQuery = Type.Object({
  context_id: Type.Optional(Text(200, 'Only the gates of this thread (A2A contextId).')),
  workflow_run_id: Type.Optional(Text(200, 'Only the gates of this workflow run.')),
  state: Type.Optional(Type.Enum(GATE_STATES, { default: 'pending', description: 'Gates in this state (default `pending`).' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT, description: 'Page size.' })),
  cursor: Type.Optional(Text(300, 'Where the previous page ended (its `next_cursor`).')),
});
export const GateList = data(
  Type.Object({ gates: Type.Array(component(GateSchema)), next_cursor: Type.Union([Type.String(), Type.Null()], { description: 'The next page, or null on the last.' }) }),
  'One page of gates, the longest waiting first.',
);
export const GatePath = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100, pattern: NO_NUL, description: 'The gate id.' }) });
export const OneGate = data(component(GateSchema), 'The gate.');
export const GateDecisionBody = Type.Object(
  {
    decision: Type.Enum(['approve', 'deny'] as const, { description: 'What the human decided.' }),
    arguments_hash: Type.String({ minLength: 1, maxLength: 128, pattern: NO_NUL, description: 'The `arguments_hash` of the gate: the decision is bound to those arguments.' }),
  },
  { additionalProperties: false },
);
export const GateDecided = data(
  Type.Object({ outcome: Type.Enum(['approved', 'denied'] as const), gate: component(GateSchema) }),
  'The decision was taken; the run resumes.',
);

/** The named components, registered on the app before any route refers to them. */
export const COMPONENTS: TSchema[] = [PluginSpecifications, BuiltinSpecifications, ConnectorSpecifications, CapabilitySchema, UploadResultSchema, DeviceAuthorizationSchema, TokenResponseSchema, GateSchema];
