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
const data = <T extends TSchema>(schema: T, description: string) => Type.Object({ data: schema }, { description });

// The pattern is what is checked: the `uuid` format alone would also admit a `urn:uuid:` prefix.
const Uuid = (description: string) => Type.String({ format: 'uuid', pattern: PATTERNS.uuid.pattern, description });
const NO_NUL = PATTERNS.noNul.pattern;
const Timestamp = (description: string) => Type.String({ format: 'date-time', description: `${description} (ISO 8601, UTC)` });
const Text = (maxLength: number, description: string) => Type.String({ maxLength, pattern: NO_NUL, description });

export const DEFAULT_LIMIT = 20;
const MAX_LIMIT = 100;
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

export const CapabilitySchema = Type.Object(
  {
    id: Type.String({ description: 'UUID for plugins; a fixed string id for built-ins.' }),
    account_id: Uuid('The owning account.'),
    name: Type.String(),
    description: Type.String(),
    namespace: Type.String({ description: 'Unique per account; the prefix of MCP tool names.' }),
    type: Type.Enum(CAPABILITY_TYPES),
    is_active: Type.Boolean(),
    active_version: Type.Integer({ minimum: 0, description: '0 means no activated version.' }),
    logo_url: Type.String(),
    specifications: Type.Object({
      type: Type.Enum(CAPABILITY_TYPES),
      active_version: Type.Integer({ minimum: 0 }),
      versions: Type.Array(PluginVersion),
    }),
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

export const CapabilityPath = Type.Object({ id: Uuid('The capability id.') });
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

/** The named components, registered on the app before any route refers to them. */
export const COMPONENTS: TSchema[] = [CapabilitySchema, UploadResultSchema, DeviceAuthorizationSchema, TokenResponseSchema];
