/**
 * The registry of every error code of the platform: its kind (what each surface maps to its wire format), a default
 * message and how to get past it. docs/errors.md lists the same codes (a test keeps the two equal). Codes are stable:
 * clients match on them; a code is never reused for another meaning.
 */
export const ERROR_KINDS = ['invalid', 'unauthenticated', 'forbidden', 'not_found', 'conflict', 'too_large', 'rate_limited', 'overloaded', 'unavailable', 'internal'] as const;
export type ErrorKind = (typeof ERROR_KINDS)[number];

export interface ErrorSpec {
  kind: ErrorKind;
  message: string;
  fix: string;
}

const e = (kind: ErrorKind, message: string, fix: string): ErrorSpec => ({ kind, message, fix });

export const ERRORS = {
  // Platform-wide
  PLT_INTERNAL: e('internal', 'internal error', 'Retry; report the x-request-id if it persists.'),
  PLT_INVALID_TEXT: e('invalid', 'a text field holds a character the platform cannot store (NUL or invalid UTF-8)', 'Remove NUL characters and send valid UTF-8.'),
  PLT_REMOTE_ERROR: e('internal', 'a node answered with an error of an unknown kind', 'Retry; check that every node of the cluster runs the same release.'),
  PLT_ACCOUNT_SUSPENDED: e('forbidden', 'the account is suspended', 'Ask the operator to resume the account (`platform admin account resume`).'),

  // Actor runtime
  PLT_ACTOR_NOT_FOUND: e('not_found', 'no such actor', 'Check the address (`kind/accountId/id`); the actor may have finished.'),
  PLT_ACTOR_EXISTS: e('conflict', 'an actor already lives at this address', 'Use a new id, or send events to the existing actor.'),
  PLT_ACTOR_UNKNOWN_KIND: e('invalid', 'no actor kind of that name', 'Use a kind listed in actors/index.ts.'),
  PLT_ACTOR_FAILED: e('internal', 'the actor failed while handling the event', 'Report it: a statechart action threw.'),
  PLT_ACTOR_CONFLICT: e('unavailable', 'concurrent writers on one actor', 'Retry: the actor moved or was written elsewhere meanwhile.'),
  PLT_ACTOR_HOST_STOPPED: e('unavailable', 'the actor host is stopping', 'Retry against another node.'),
  PLT_ACTOR_UNAVAILABLE: e('unavailable', 'no owner answered in time', 'Retry shortly: the actor\'s shard is changing hands or its node is down.'),
  PLT_SHARD_MOVING: e('unavailable', 'the shard is being handed off', 'Retry shortly.'),
  PLT_EFFECT_UNDECLARED: e('internal', 'a statechart started an effect the runtime does not implement', 'Report it: every effect a machine names needs an implementation.'),
  PLT_STORE_CONFLICT: e('conflict', 'a stale write was refused', 'Retry: the row changed since it was read.'),
  PLT_LANE_OVERLOADED: e('overloaded', "the account's execution lane is full", 'Retry after a second, or send fewer calls at once.'),
  PLT_BODY_UNREADABLE: e('too_large', 'the request body could not be parsed within its time and memory limits', 'Send a smaller body, with fewer and shallower values.'),
  BUS_NO_RESPONDERS: e('unavailable', 'no node serves the request', 'Retry shortly: nodes are starting or taking over.'),
  BUS_TIMEOUT: e('unavailable', 'no answer over the bus in time', 'Retry shortly.'),
  BUS_CLOSED: e('unavailable', 'the node is shutting down', 'Retry against another node.'),
  BUS_REMOTE_ERROR: e('internal', 'a node answered with an error', 'Retry; report it if it persists.'),

  // Edge (any surface, before a surface is chosen)
  EDGE_UNKNOWN_HOST: e('not_found', 'no service at this host', 'Use api.<domain>, mcp-{handle}.<domain> or agent-{handle}.<domain>.'),
  EDGE_STARTING: e('unavailable', 'the node is starting', 'Retry in a second.'),
  EDGE_BAD_REQUEST: e('invalid', 'the HTTP request could not be parsed', 'Send a well-formed HTTP/1.1 request (one Host header, valid URL encoding, headers within 16 KiB).'),
  EDGE_TOO_MANY_CONNECTIONS: e('overloaded', 'too many open connections from this address', 'Reuse keep-alive connections and close those you no longer need; behind a proxy every client shares its address, so the operator raises `PLATFORM_MAX_CONNECTIONS_PER_ADDRESS`.'),

  // Management API
  MGMT_CREDENTIAL_MISSING: e('unauthenticated', 'missing credential: send an API key or access token as Authorization: Bearer <credential> (or Authorization: ApiKey, API-Key, X-API-Key)', 'Send a credential header; cookies and query-string tokens are never read.'),
  MGMT_CREDENTIAL_MALFORMED: e('unauthenticated', 'malformed credential: expected an API key (ak-...) or a device-flow access token (JWT)', 'Send the credential exactly as issued, after a supported scheme (Bearer or ApiKey).'),
  MGMT_CREDENTIAL_INVALID: e('unauthenticated', 'invalid credential: the API key or access token was not accepted', 'Check the key or token; issue a new key with `platform admin key create` or log in again.'),
  MGMT_CREDENTIAL_EXPIRED: e('unauthenticated', 'expired credential: the API key or access token has expired', 'Run `platform login` again (tokens last one hour) or use a key that has not expired.'),
  MGMT_CREDENTIAL_REVOKED: e('unauthenticated', 'revoked credential: this API key has been revoked', 'Ask the operator for a new key.'),
  MGMT_PRINCIPAL_INACTIVE: e('unauthenticated', 'invalid credential: its principal is disabled or no longer a member of the account', 'Ask the operator to restore the principal, or use another credential.'),
  MGMT_FORBIDDEN: e('forbidden', 'forbidden: the caller lacks the authority this operation needs', 'Use a principal whose role grants the authority (see the roles table).'),
  MGMT_OPERATOR_ONLY: e('forbidden', "forbidden: this route is the operator's; the credential is neither the scrape token nor, from loopback, the operator token", "Scrape with the node's `PLATFORM_METRICS_TOKEN` as `Authorization: Bearer`, or from the node's host with the operator token of its `node.json` (docs/operations.md)."),
  MGMT_INVALID_QUERY: e('invalid', 'invalid query parameter', 'Correct the parameter named in the message.'),
  MGMT_INVALID_BODY: e('invalid', 'malformed request body', 'Send a JSON object with the documented fields.'),
  MGMT_INVALID_PATH: e('invalid', 'invalid path parameter', 'Correct the path segment named in the message.'),
  MGMT_CAPABILITY_NOT_FOUND: e('not_found', 'no such capability in this account', 'Check the capability id (`GET /v1/capabilities`).'),
  MGMT_OAUTH_UNREDEEMABLE: e('invalid', 'the device code cannot be exchanged: it is pending, unknown, already used or expired, or the grant type is unsupported', 'Keep polling at the returned interval while the human decides; otherwise start a new device authorization.'),
  MGMT_OAUTH_ACCESS_DENIED: e('forbidden', 'access denied: the user denied the authorization request', 'Start a new device authorization if the denial was a mistake.'),
  MGMT_ROUTE_NOT_FOUND: e('not_found', 'no such route on the management API', 'Check the method and path against the API reference (`GET /v1/openapi.json`).'),
  MGMT_ACTOR_NOT_FOUND: e('not_found', 'no such actor in this account', 'Check the actor address (`kind/accountId/id`); actors of other accounts are never visible.'),
  MGMT_STATECHART_NOT_FOUND: e('not_found', 'no statechart of that kind', 'Use a machine listed on the `/viz` page or by `platform viz export`.'),
  MGMT_GATE_NOT_FOUND: e('not_found', 'no such approval gate visible to this caller', 'Check the gate id (`GET /v1/approval-gates`); gates of other users are visible to admins and owners only.'),
  MGMT_GATE_DECISION_REJECTED: e('conflict', 'the decision was not taken; the gate is unchanged', 'Read the reason in the message: decide a pending gate, as a user, for the arguments the gate shows.'),
  MGMT_USER_REQUIRED: e('forbidden', 'only a user may do this; a service principal may not', "Use a user's credential (a device-flow token or a user's API key)."),
  MGMT_ATTACHMENT_NOT_FOUND: e('not_found', 'no such attachment visible to this caller', 'Check the attachment id (`GET /v1/attachments`); attachments of other users are visible to admins and owners only.'),
  MGMT_FILE_LINK_INVALID: e('forbidden', 'the file link is not valid: its signature does not match, or it has expired', 'Ask for a new link: `GET /v1/files/{id}` with a credential, or `POST /v1/attachments/{id}/url`.'),
  MGMT_AGENT_NOT_FOUND: e('not_found', 'no such agent in this account', 'Check the agent id (`platform agents list`).'),
  MGMT_GATEWAY_NOT_FOUND: e('not_found', 'no such gateway in this account', 'Check the gateway id (`platform gateways list`).'),
  MGMT_HOME_PATH_NOT_FOUND: e('not_found', "no such file or directory in the agent's home directory", 'List the directory first (`GET /v1/agents/{agent_id}/files`).'),
  MGMT_HOME_PATH_INVALID: e('invalid', "the path cannot name anything in the agent's home directory", 'Give a relative path with / between names, without .. above the root, through no symbolic link.'),
  MGMT_JOURNAL_ENTRY_NOT_FOUND: e('not_found', "no such entry in this user's journal of the agent", 'List the journal first (`GET /v1/agents/{agent_id}/journal`).'),
  MGMT_LINK_CODE_INVALID: e('invalid', 'the link code is unknown, used or expired', 'Ask the integration for a new link code; each code links once and expires after 10 minutes.'),
  MGMT_SERVICE_PRINCIPAL_REQUIRED: e('forbidden', 'only a service principal may do this', "Create link codes with the API key of the integration's service principal."),
  MGMT_BODY_TOO_LARGE: e('too_large', 'request body too large', 'Send a smaller body.'),
  MGMT_UNSUPPORTED_MEDIA_TYPE: e('invalid', 'unsupported content type', 'Send application/json (or multipart/form-data for uploads).'),
  MGMT_UNAVAILABLE: e('unavailable', 'the service is not ready', 'Retry shortly.'),

  // Plugins: upload, admission, activation
  // Skills
  SKILL_NOT_FOUND: e('not_found', 'no such skill in this account', 'Check the skill id (`GET /v1/skills`).'),
  SKILL_NAME_TAKEN: e('conflict', 'the account has a skill of that name already', 'Choose another name, or update the existing skill (`PATCH /v1/skills/{id}`).'),
  SKILL_INVALID: e('invalid', 'the skill is not a valid SKILL.md bundle', 'Read the reason in the message: a SKILL.md at the top, front matter with name and description, relative file paths (docs/skills.md).'),
  SKILL_TOO_LARGE: e('too_large', 'the skill is larger than a skill may be', 'Keep a skill within 64 files and 512 KiB of files (SKILL.md at most 256 KiB); an imported archive at most 1 MiB.'),
  SKILL_IMPORT_FAILED: e('invalid', 'the skill could not be imported', 'Read the reason in the message: send a .tar.gz whose top holds SKILL.md (or a SKILL.md), from a URL the egress rules admit.'),
  // Workflows
  WORKFLOW_NOT_FOUND: e('not_found', 'no such workflow in this account', 'Check the workflow id or name (`GET /v1/workflows`, `platform admin workflow list`).'),
  WORKFLOW_INVALID: e('invalid', 'the workflow definition is not valid', 'Read the reason in the message; docs/workflows.md describes the steps and their fields.'),
  WORKFLOW_INPUT_INVALID: e('invalid', "the run's input does not match the workflow's input schema", "Send input the workflow's `input` schema admits (`GET /v1/workflows/{id}` shows it)."),
  WORKFLOW_TARGET_REQUIRED: e('invalid', 'the workflow calls tools and the run names no agent or gateway', "Start the run with `agent_id` or `gateway_id`: its tool steps call that one's tools."),
  WORKFLOW_RUN_NOT_FOUND: e('not_found', 'no such workflow run visible to this caller', 'Check the run id (`GET /v1/workflow-runs`); runs of other users are visible to admins and owners only.'),
  WORKFLOW_RUN_ENDED: e('conflict', 'the workflow run has ended', 'Start a new run; an ended run takes no cancel, decision or signal.'),
  WORKFLOW_NOT_WAITING: e('conflict', 'the workflow run is not waiting for that', 'Read the run (`GET /v1/workflow-runs/{id}`): `waiting_for` says what it waits for, if anything.'),
  // Schedules
  SCHEDULE_INVALID: e('invalid', 'the schedule is not valid', 'Give exactly one of `at` (an ISO 8601 time ahead), `delay_seconds` or a five-field `cron` (with an IANA `timezone`), within a year, and a message of at most 16 KiB.'),
  SCHEDULE_LIMIT: e('conflict', 'too many active schedules', 'Cancel schedules that are no longer needed: an agent has at most 100 active, an account 1000.'),
  SCHEDULE_NOT_FOUND: e('not_found', 'no such schedule visible to this caller', 'Check the schedule id (`GET /v1/schedules`); schedules of other users are visible to admins and owners only.'),
  SCHEDULE_ENDED: e('conflict', 'the schedule has ended', 'An ended schedule (completed, canceled, failed) takes no cancel; make a new one.'),
  TRIGGER_INVALID: e('invalid', 'the trigger is not valid', 'Give `kind` webhook or workflow, a message of at most 16 KiB, and for a workflow trigger the id of a workflow of the account and `on` among completed, failed, canceled.'),
  TRIGGER_LIMIT: e('conflict', 'too many triggers', 'Delete triggers that are no longer needed: an agent has at most 100, an account 1000.'),
  TRIGGER_NOT_FOUND: e('not_found', 'no such trigger', 'Check the trigger id (`GET /v1/triggers`) and that the delivery goes to the host of the agent that owns it.'),
  TRIGGER_SIGNATURE_INVALID: e('unauthenticated', 'the delivery is not signed with the trigger\'s secret, or its timestamp is too far from now', 'Send X-Platform-Timestamp (Unix seconds, within 300 s of now) and X-Platform-Signature: sha256=<hex HMAC-SHA256 of "{timestamp}.{raw body}"> under the trigger\'s secret.'),
  TRIGGER_REPLAYED: e('conflict', 'this delivery was received before', 'Nothing to do: the run it started goes on. Sign each new delivery with its own timestamp.'),
  TRIGGER_REFUSED: e('forbidden', 'the trigger\'s maker can no longer run its agent', 'Its maker was removed, disabled or lost execute authority: make a new trigger as someone who can run the agent.'),
  TRIGGER_DELIVERY_INVALID: e('invalid', 'the delivery cannot become a run of the agent', 'The agent refused the run\'s message (the message says why, e.g. too large): retrying the same delivery fails the same way.'),
  TRIGGER_FAILED: e('unavailable', 'the run could not start now', 'Retry the delivery later (with a new timestamp and signature): the account\'s lanes are busy or the agent runtime is moving.'),
  TRIGGER_BODY_TOO_LARGE: e('too_large', 'the delivery\'s body is too large', 'Keep a delivery at or under 256 KiB; send a link to larger data.'),
  // Plugin builds
  BUILD_NOT_FOUND: e('not_found', 'no such plugin build visible to this caller', 'Check the build id (`GET /v1/plugin-builds`); builds of other users are visible to admins and owners only.'),
  BUILD_INVALID: e('invalid', 'the build request is not valid', 'Read the reason in the message: a plugin name, a WIT world the source implements (docs/plugin-builds.md).'),
  BUILD_TOO_LARGE: e('too_large', "the build's source is larger than a build takes", 'Keep the source within 256 KiB, the WIT within 64 KiB and platform.yaml within 16 KiB.'),
  BUILD_FAILED: e('invalid', 'the build failed', 'Read the log in the message (and `GET /v1/plugin-builds/{id}`): fix the source or the WIT, then build again.'),
  BUILD_ENDED: e('conflict', 'the plugin build has ended', 'A build that ended takes no cancel; start a new one.'),
  BUILD_UNAVAILABLE: e('unavailable', 'this node cannot run builds', 'Check that `unshare` is installed and user namespaces are allowed (docs/plugin-builds.md).'),
  // Models
  MODEL_FAILED: e('unavailable', 'the model provider failed', 'Retry; check the provider (PLATFORM_MODEL_PROVIDERS, its API key) if it persists.'),
  AGENT_STEP_TIMEOUT: e('unavailable', 'a step of the agent took longer than its limit', 'Retry; raise PLATFORM_AGENT_STEP_TIMEOUT_SECONDS if the model or tool is slow by nature.'),
  MODEL_UNKNOWN: e('invalid', 'no configured model of that name', 'Name a model as provider/model with a provider of PLATFORM_MODEL_PROVIDERS, or scripted/<rules name>.'),

  PLUGIN_ARCHIVE_NOT_GZIP: e('invalid', 'unreadable archive: not gzip-compressed', 'Pack the plugin with `platform plugins pack` (an .npack is a gzip-compressed tar).'),
  PLUGIN_ARCHIVE_NOT_TAR: e('invalid', 'unreadable archive: not a tar archive', 'Pack the plugin with `platform plugins pack`.'),
  PLUGIN_ARCHIVE_TRUNCATED: e('invalid', 'unreadable archive: truncated', 'Upload the whole file again.'),
  PLUGIN_ARCHIVE_TOO_LARGE: e('too_large', 'unreadable archive: it decompresses past the limit', 'Keep the decompressed archive under 64 MiB.'),
  PLUGIN_ARCHIVE_TOO_MANY_ENTRIES: e('invalid', 'unreadable archive: too many entries', 'Pack only the component, platform.yaml, .env and .wit files.'),
  PLUGIN_ARCHIVE_ENTRY_TOO_LARGE: e('too_large', 'unreadable archive: an entry is too large', 'Keep the component under 32 MiB and the other entries under their limits (platform.yaml 64 KiB, .env and each .wit 256 KiB).'),
  PLUGIN_ARCHIVE_NO_WASM: e('invalid', 'the archive has no component', 'Add the *.wasm component to the archive.'),
  PLUGIN_CONFIG_INVALID: e('invalid', 'invalid config', 'Fix platform.yaml at the paths the message names (schema_version "1.0").'),
  PLUGIN_WASM_INVALID: e('invalid', 'failed WASM validation', 'Upload a Component Model binary that imports only the allowed WASI interfaces and exports a callable function.'),
  PLUGIN_ADMISSION_TIMEOUT: e('invalid', 'the archive took too long to admit', 'Upload a smaller or simpler component.'),
  PLUGIN_VERSION_NOT_FOUND: e('not_found', 'no such capability version in this account', 'Check the capability id and version number (`GET /v1/capabilities`).'),
  ACTIVATION_NOT_ALLOWED: e('conflict', 'the version cannot be activated in its current state', 'Wait for an activation in progress to finish; an active version needs no activation.'),
  ACTIVATION_FAILED: e('invalid', 'activation failed; the previously active version keeps serving', 'Read the reason (for example a memory limit below what the component needs at start) and upload a fixed version.'),

  // Tools
  TOOL_NOT_FOUND: e('not_found', 'no such tool', 'List the tools again: the name is unknown or not bound here.'),
  TOOL_NOT_ACTIVE: e('conflict', 'the plugin has no activated version', 'Wait for the upload to activate, or activate a version.'),
  TOOL_FORBIDDEN: e('forbidden', 'the caller may not run this tool', 'Use a principal with execute authority.'),
  TOOL_INVALID_ARGUMENTS: e('invalid', 'the arguments do not match the tool\'s input schema', 'Send arguments that match the inputSchema of tools/list.'),
  TOOL_NEEDS_ANCHOR: e('forbidden', 'this tool works in a workspace, and the caller has none', 'Sign in: anonymous callers have no workspace.'),
  TOOL_CODE_LIMIT: e('invalid', 'the code ran past its time or memory limit and was stopped', 'Make the code finish within its timeout and memory limit: end loops, build smaller values.'),
  TOOL_SCHEMA_LIMIT: e('invalid', "the tool's input schema could not be compiled within the platform's time or memory limit", 'Give the tool simpler parameters (fewer fields and variant cases), or split it into several tools.'),
  TOOL_PAGE_LIMIT: e('invalid', 'reading the page ran past its time or memory limit and was stopped', 'Ask for a smaller page, or a narrower selector.'),
  CONNECTOR_UNAVAILABLE: e('unavailable', 'the upstream server of a connector could not be reached', 'Check that the connector\'s server is up and that its URL and credentials are right.'),
  KV_LIMIT: e('too_large', "the plugin's key-value store is full", 'Delete keys: a plugin holds at most 64 MiB of keys and values.'),

  // Autonomy policies
  AUTONOMY_POLICY_INVALID: e('invalid', 'the autonomy policy document is invalid', 'Correct the field named in the message (docs/autonomy.md describes the document).'),
  AUTONOMY_POLICY_TOO_LARGE: e('too_large', 'the autonomy policy document is larger than its limit', 'Keep a policy within 16 KiB as JSON: fold rules into `*` or into fewer conditions.'),
  AUTONOMY_UNKNOWN_AGENT: e('not_found', 'no such agent in this account', 'Check the agent id (`platform agents list`).'),
  AUTONOMY_UNKNOWN_PRINCIPAL: e('not_found', 'no such principal in this account', 'Check the principal id (printed by `platform admin user create` or `platform admin principal create`).'),

  // Gateways and accounts
  GATEWAY_NOT_FOUND: e('not_found', 'no such gateway', 'Use the handle of an existing gateway.'),
  GATEWAY_SUSPENDED: e('forbidden', 'the gateway is suspended by its operator', 'Ask the operator to resume it (`platform admin gateway resume`).'),
  GATEWAY_RETIRED: e('not_found', 'the gateway is retired and serves nothing', 'Use another gateway; a retired gateway does not come back.'),

  // Operator commands
  ADMIN_INVALID: e('invalid', 'invalid operator command', 'Correct the option the message names.'),
  ADMIN_NOT_FOUND: e('not_found', 'no such resource', 'Check the id or handle (`platform admin ... list`).'),
  ADMIN_CONFLICT: e('conflict', 'already taken, or not possible in the current state', 'Use another handle or name, or check the resource\'s state.'),

  // Identity
  IDENTITY_DELEGATION_INVALID: e('invalid', 'the agent token cannot be minted for this chain', 'Name an agent of the account and at most five actors, each a live member of the account.'),

  // Egress: the platform's outbound requests on a tenant's behalf (runtime/core/egress)
  EGRESS_REFUSED: e('invalid', 'the egress policy refused the outbound request', 'Use an https URL of a public host: loopback, private, link-local and metadata addresses (also behind a name that resolves to one), credentials in the URL and redirects are refused.'),
  EGRESS_TOO_LARGE: e('too_large', 'the response is larger than allowed', 'Serve a smaller response: the message names the limit.'),
  EGRESS_TIMEOUT: e('unavailable', 'the remote host did not answer in time', 'Make the host answer within the time the message names (10 s unless said otherwise), or retry later.'),
  EGRESS_FAILED: e('unavailable', 'the outbound request failed', 'Check that the host is reachable from the platform: its name resolves, it accepts connections, its TLS certificate is valid.'),

  // Push delivery (runtime/push): never on a wire, only in the node's log of a delivery given up
  PUSH_DELIVERY_REJECTED: e('unavailable', 'the push receiver answered with a status other than 2xx', 'Make the receiver answer a push notification POST with a 2xx status (redirects are not followed).'),

  // Agent gateways (A2A 1.0): the agent runtime raises the task codes, the A2A surface the others; edge/a2a/errors.ts
  // maps each to its HTTP status, JSON-RPC code and ErrorInfo reason
  A2A_UNKNOWN_AGENT: e('not_found', 'no agent at this host', 'Use the host agent-{handle}.<domain> of an existing agent.'),
  A2A_ROUTE_NOT_FOUND: e('not_found', 'no such route on the agent gateway', 'Fetch GET /.well-known/agent-card.json, or POST JSON-RPC to / (or /stream).'),
  A2A_METHOD_NOT_ALLOWED: e('invalid', 'JSON-RPC requests are POSTed', 'POST the JSON-RPC request to / (or /stream).'),
  A2A_BODY_TOO_LARGE: e('too_large', 'the request body is too large', 'Keep a request at or under 28 MiB: a file of up to 20 MiB fits inline as a raw part (base64), or send it as a url part.'),
  A2A_BAD_REQUEST: e('invalid', 'the HTTP request could not be read', 'Send a well-formed HTTP request with a JSON body.'),
  A2A_CREDENTIAL_MISSING: e('unauthenticated', 'missing credential: send Authorization: Bearer <API key or agent token>', 'Send a service principal\'s API key (ak-...) or an agent token as Authorization: Bearer.'),
  A2A_CREDENTIAL_INVALID: e('unauthenticated', 'invalid credential', 'Send a live API key of the agent\'s account, or an unexpired agent token whose audience names this agent and whose chain is live.'),
  A2A_USER_KEY: e('forbidden', "a user's API key cannot call an agent", 'Use a service principal\'s API key (`platform admin principal create`), or an agent token.'),
  A2A_FORBIDDEN: e('forbidden', 'the caller lacks execute authority on this agent', 'Use a principal whose role grants execute (member, admin or owner).'),
  A2A_PARSE_ERROR: e('invalid', 'the body is not valid JSON', 'Send one JSON-RPC 2.0 request object as JSON.'),
  A2A_INVALID_REQUEST: e('invalid', 'not a valid JSON-RPC 2.0 request', 'Send one object with jsonrpc "2.0", a string or number id, a method and object params; batches are not taken.'),
  A2A_METHOD_NOT_FOUND: e('not_found', 'no such method', 'Use one of the eleven A2A 1.0 method names (SendMessage, GetTask, ...); the 0.x slash names are not served.'),
  A2A_INVALID_PARAMS: e('invalid', 'invalid params', 'Correct the member the message names (camelCase or snake_case names, enums by name or number).'),
  A2A_TASK_NOT_FOUND: e('not_found', 'task not found', 'Check the task id: tasks of other callers or agents are never visible.'),
  A2A_TASK_NOT_CANCELABLE: e('conflict', 'the task cannot be canceled in its current state', 'Only a task that has not ended can be canceled.'),
  A2A_TASK_EXISTS: e('conflict', 'a task with this id already exists', 'Omit taskId to have one minted, or use a new id; continue a task by sending to it, not by creating it again.'),
  A2A_PUSH_NOT_SUPPORTED: e('invalid', 'push notifications are not supported', 'Use SubscribeToTask or GetTask instead.'),
  A2A_PUSH_URL_REFUSED: e('invalid', 'the push notification url is refused', 'Register an https URL of at most 2048 characters, without userinfo, whose host is a public name or address (not loopback, private, link-local or a cloud metadata service).'),
  A2A_PUSH_AUTH_REFUSED: e('invalid', 'the push notification token or authentication is refused', 'Use authentication scheme bearer or basic with non-empty credentials; token and credentials are printable ASCII without CR or LF, at most 4096 characters each.'),
  A2A_PUSH_CONFIG_LIMIT: e('conflict', 'the task holds as many push notification configs as it may', 'Delete a config of the task, or replace one by creating it again with its id: a task holds at most 10.'),
  A2A_PUSH_CONFIG_NOT_FOUND: e('not_found', 'push notification config not found', 'Check the config id with ListTaskPushNotificationConfigs: config ids are scoped per task.'),
  A2A_UNSUPPORTED_OPERATION: e('invalid', 'this operation is not supported', 'Read the message: the operation is not served here, or not in the task\'s current state.'),
  A2A_CONTENT_TYPE_NOT_SUPPORTED: e('invalid', 'unsupported content type', 'POST with Content-Type: application/json; send parts in media types the agent accepts.'),
  A2A_INVALID_AGENT_RESPONSE: e('internal', 'the agent produced an invalid response', 'Retry; report the x-request-id if it persists.'),
  A2A_EXTENDED_CARD_NOT_CONFIGURED: e('not_found', 'no extended agent card is configured', 'Use the public card at /.well-known/agent-card.json.'),
  A2A_EXTENSION_REQUIRED: e('invalid', 'the agent requires an extension the client did not request', 'Request the extension in the A2A-Extensions header.'),
  A2A_VERSION_NOT_SUPPORTED: e('invalid', 'this A2A protocol version is not supported', 'Send A2A-Version: 1.0 (or omit it): the gateway speaks A2A 1.0 only.'),
  A2A_ATTACHMENT_TOO_LARGE: e('invalid', 'an attachment is larger than 20 MiB', 'Send files of at most 20 MiB (20971520 bytes) each, as raw or url parts.'),
  A2A_ATTACHMENT_QUOTA_EXCEEDED: e('invalid', "the account's attachment quota is used up", 'Ask an operator to raise PLATFORM_ATTACHMENT_QUOTA_BYTES; `GET /v1/attachments/quota` shows what is used.'),
  A2A_MESSAGE_TOO_LARGE: e('invalid', 'the text of a message is larger than 1 MiB', 'Send at most 1 MiB (1048576 bytes) of text and data parts in one message; send longer documents as file parts.'),
  A2A_ATTACHMENT_FETCH_FAILED: e('invalid', "a url part could not be fetched through the platform's egress policy", 'Use an https URL of a public host that answers 2xx within 10 s, without a redirect.'),
  A2A_IMAGE_TOO_LARGE: e('invalid', 'an image is larger than 4096 x 4096 pixels', 'Scale the image to at most 4096 pixels wide and 4096 pixels tall.'),
  A2A_IMAGE_UNREADABLE: e('invalid', 'the dimensions of an image part cannot be read', 'Send PNG, JPEG, GIF, WebP, BMP, TIFF, AVIF/HEIF or SVG, or give bytes that are no image another media type.'),

  // The AG-UI route of the agent gateways (POST /agui, /ag-ui); edge/a2a/agui-errors.ts maps every code to its HTTP status
  AGUI_INVALID_INPUT: e('invalid', 'the AG-UI run input is invalid', 'Send a RunAgentInput (threadId, runId, messages) whose last user message is the one to send, or a resume answering the open interrupt; the message names the member at fault.'),
  AGUI_BODY_TOO_LARGE: e('too_large', 'the AG-UI run input is too large', 'Keep a run input at or under 8 MiB: the platform keeps the thread, so only the new user message must be sent; send files as url parts.'),
  AGUI_INTERRUPT_UNKNOWN: e('invalid', 'the resumed interrupt is not open', "Answer the interrupt of the thread's last run, by its id, once: an answered or expired gate cannot be answered again."),

  // OAuth authorization servers of the MCP gateways (the wire `error` is the code without its prefix, lowercased)
  OAUTH_INVALID_REQUEST: e('invalid', 'invalid_request', 'Send the parameters the message names.'),
  OAUTH_INVALID_CLIENT: e('unauthenticated', 'invalid_client', 'Authenticate the client as it was registered.'),
  OAUTH_INVALID_GRANT: e('invalid', 'invalid_grant', 'Start the authorization again: the code or refresh token is invalid, expired or used.'),
  OAUTH_UNAUTHORIZED_CLIENT: e('invalid', 'unauthorized_client', 'Use a grant type the client was registered for.'),
  OAUTH_UNSUPPORTED_GRANT_TYPE: e('invalid', 'unsupported_grant_type', 'Use authorization_code, refresh_token or client_credentials.'),
  OAUTH_UNSUPPORTED_RESPONSE_TYPE: e('invalid', 'unsupported_response_type', 'Use response_type=code.'),
  OAUTH_INVALID_SCOPE: e('invalid', 'invalid_scope', 'Ask for mcp and profile scopes only.'),
  OAUTH_INVALID_TARGET: e('invalid', 'invalid_target', "Send the gateway's own origin as `resource`."),
  OAUTH_ACCESS_DENIED: e('forbidden', 'access_denied', 'The user or the gateway refused; ask its operator.'),
  OAUTH_INVALID_CLIENT_METADATA: e('invalid', 'invalid_client_metadata', 'Fix the registration metadata the message names.'),
  OAUTH_INVALID_REDIRECT_URI: e('invalid', 'invalid_redirect_uri', 'Register https redirect URIs (or http on loopback).'),
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof ERRORS;
