import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Every setting of the platform, read and validated in one place. Defaults run on a bare machine (PGlite in the
 * data directory, in-process bus). A bad value stops start-up with a message naming the variable.
 * The README's configuration table is checked against SETTINGS by a test.
 */
export interface PlatformConfig {
  port: number;
  host: string;
  domain: string;
  publicScheme: 'http' | 'https';
  publicPort: number;
  /** PEM files the node serves HTTPS with (read and checked at start, edge/tls-credentials.ts); null: plain HTTP. */
  tls: { certFile: string; keyFile: string } | null;
  dataDir: string;
  /** Where a freshly made embedded database is kept, so new data directories start from a copy; null: none. */
  pgliteTemplateDir: string | null;
  databaseUrl: string | null;
  /** Keep the hot statements prepared on each PostgreSQL connection (store/statement-names.ts). */
  databasePrepare: boolean;
  natsUrl: string | null;
  leaseMs: number;
  nodeId: string | null;
  clusterName: string;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** `auto`: pretty lines when stdout is a terminal, JSON lines otherwise. */
  logFormat: 'auto' | 'json' | 'pretty';
  /** The token a Prometheus scraper presents as `Authorization: Bearer` at `/metrics`; null: none is accepted. */
  metricsToken: string | null;
  /** Scrapes of `/metrics` from loopback need no token (a scraper beside the node, never one behind a local proxy). */
  metricsAllowLoopback: boolean;
  deviceCodeTtlSeconds: number;
  devicePollIntervalSeconds: number;
  actorIdleSeconds: number;
  shutdownGraceMs: number;
  maxConnectionsPerAddress: number;
  writeTimeoutMs: number;
  /** Compile the routes' schemas in the background once the node serves, so no request pays for one (edge/http/compile-ahead.ts). */
  compileAhead: boolean;
  /** Let the loop poll instead of sleeping while work is about to come (runtime/core/loop/hot-loop.ts). */
  loopPolling: boolean;
  seedDemo: boolean;
  workspacesDir: string;
  pluginPrivateNetwork: boolean;
  /** Development only: push receivers on loopback are admitted, over plain http too. */
  pushAllowLoopback: boolean;
  /** Development and tests only: egressFetch may reach loopback addresses, over plain http too. */
  egressAllowLoopback: boolean;
  /** Development and tests only: a PEM file of CAs egressFetch trusts besides the system's (null: none). */
  egressExtraCaFile: string | null;
  /** The SearXNG instance the Web Search built-in asks (its JSON API enabled); null: web search is not configured. */
  searxngUrl: string | null;
  /** The Chromium the Browser's captures launch (screenshot, pdf, snapshot); null: they answer that none is installed. */
  chromiumPath: string | null;
  /** Push deliveries in flight at once on this node, per lane (each lane has its own). */
  pushReservedSlots: number;
  pushBestEffortSlots: number;
  /** Reserved-lane deliveries an account may have waiting (beyond it they are given up and logged). */
  pushReservedQueue: number;
  /** Best-effort deliveries an account may have waiting; past it the oldest is dropped. */
  pushBestEffortQueue: number;
  /** Deadline of one push delivery (at most egress's 10 s). */
  pushTimeoutMs: number;
  /** Wait before the one retry of a failed reserved-lane delivery. */
  pushRetryDelayMs: number;
  mcpCallPrice: number;
  mcpRequestRate: number;
  mcpInitializeRate: number;
  laneQueue: number;
  /** OpenAI-compatible model providers the operator configured (`scripted` is always there, served by the node). */
  modelProviders: { name: string; baseUrl: string; apiKey?: string }[];
  /** The scripted model's rules file; null: the demo rules shipped with the platform. */
  scriptedRules: string | null;
  /** The model of an agent created without one (`provider/model`). */
  defaultModel: string;
  /** Model turns an agent run takes at most. */
  agentMaxSteps: number;
  /** A model turn or a round of tool calls is abandoned after this long. */
  agentStepTimeoutMs: number;
  /** How long an approval gate waits for a human before it expires (a denial). */
  approvalTtlMs: number;
  /** Bytes of attachments (A2A file parts) an account may hold. */
  attachmentQuotaBytes: number;
  /** How long a presigned file URL stays valid unless the caller asks for another lifetime. */
  fileLinkTtlSeconds: number;
}

export interface Setting {
  env: string;
  default: string;
  description: string;
}

export const SETTINGS: readonly Setting[] = [
  { env: 'PORT', default: '8080', description: 'Port of the node, HTTP or with `PLATFORM_TLS_CERT` HTTPS (all three surfaces share it; routed by Host)' },
  { env: 'HOST', default: '127.0.0.1', description: 'Interface to listen on (`0.0.0.0` in containers)' },
  { env: 'PLATFORM_DOMAIN', default: 'localhost', description: 'Domain of the hosts: `api.<domain>`, `mcp-{handle}.<domain>`, `agent-{handle}.<domain>`' },
  { env: 'PLATFORM_PUBLIC_SCHEME', default: 'http (https with PLATFORM_TLS_CERT)', description: 'Scheme of the URLs the platform prints and signs (`http`, or `https` when the node serves TLS itself or sits behind a TLS proxy)' },
  { env: 'PLATFORM_PUBLIC_PORT', default: '$PORT', description: 'Port of the public URLs (omitted from URLs when it is the scheme default)' },
  { env: 'PLATFORM_TLS_CERT', default: '(none: plain HTTP)', description: "PEM file of the certificate the node serves HTTPS with (the server's certificate first, then any intermediates); with `PLATFORM_TLS_KEY` the port speaks HTTPS only and every public URL is `https`. `platform dev-cert` makes one for local use (docs/https.md)" },
  { env: 'PLATFORM_TLS_KEY', default: '(none)', description: "PEM file of that certificate's private key, unencrypted (keep it mode 0600); a missing, unreadable or mismatched file stops the start" },
  { env: 'PLATFORM_DATA_DIR', default: './.platform', description: 'Embedded database (PGlite) and node files such as the operator token' },
  { env: 'PLATFORM_PGLITE_TEMPLATE_DIR', default: 'node_modules/.cache/agent-platform', description: "Where a new embedded database (initdb and the migrations, no rows) is kept, so a later new data directory starts from a copy instead of making one again (seconds); `none`: always make it" },
  { env: 'DATABASE_URL', default: '(unset: PGlite)', description: 'PostgreSQL connection string; when set, PostgreSQL replaces PGlite' },
  { env: 'PLATFORM_DB_PREPARE', default: 'true', description: 'Keep the hot statements prepared on each PostgreSQL connection, so the database parses them once (`true` or `false`; `false` behind a pooler in transaction mode that cannot carry prepared statements, or on PostgreSQL before 12)' },
  { env: 'NATS_URL', default: '(unset: one node)', description: 'NATS server (2.9+ with JetStream); when set with DATABASE_URL the node joins the cluster' },
  { env: 'PLATFORM_LEASE_MS', default: '3000', description: 'Shard lease (NATS KV bucket TTL) in milliseconds (1000..60000); every node of a cluster must agree' },
  { env: 'PLATFORM_CLUSTER', default: 'platform', description: 'Cluster name: prefixes its NATS subjects and KV buckets, so clusters can share a NATS server' },
  { env: 'PLATFORM_NODE_ID', default: '(host-pid-random)', description: 'This node\'s name in the cluster (letters, digits, `-`, `_`)' },
  { env: 'LOG_LEVEL', default: 'info', description: 'pino level: fatal, error, warn, info, debug, trace, silent' },
  { env: 'PLATFORM_LOG_FORMAT', default: 'auto', description: '`auto` (pretty lines when stdout is a terminal, JSON lines otherwise), `json` or `pretty`' },
  { env: 'PLATFORM_METRICS_TOKEN', default: '(none)', description: 'Token a Prometheus scraper sends as `Authorization: Bearer <token>` to read `/metrics` on the management host (32..512 characters of letters, digits and `-._~+/=`); without it only the operator token from loopback reads them (docs/operations.md)' },
  { env: 'PLATFORM_METRICS_ALLOW_LOOPBACK', default: 'false', description: 'Let scrapes of `/metrics` from loopback in without a token (`true` or `false`); never behind a proxy on the same host, whose requests all come from loopback' },
  { env: 'PLATFORM_DEVICE_CODE_TTL', default: '600', description: 'Lifetime of a device-flow code in seconds (60..3600)' },
  { env: 'PLATFORM_DEVICE_POLL_INTERVAL', default: '5', description: 'Seconds a device-flow client waits between polls (1..60)' },
  { env: 'PLATFORM_ACTOR_IDLE_SECONDS', default: '120', description: 'An actor without a turn for this long is passivated (1..86400)' },
  { env: 'PLATFORM_SHUTDOWN_GRACE_MS', default: '10000', description: 'How long a graceful shutdown waits for requests in flight' },
  { env: 'PLATFORM_MAX_CONNECTIONS_PER_ADDRESS', default: '1024', description: 'Connections one client address may hold open; more are refused with 503 `EDGE_TOO_MANY_CONNECTIONS` (0..1000000, 0: no cap). Behind a proxy every client shares its address: raise it' },
  { env: 'PLATFORM_COMPILE_AHEAD', default: 'true', description: "Once the node serves, compile every route's request validators and response serializers in the background, a step per turn of the event loop, so that no request waits for a compile (`true` or `false`; `false` leaves each to its route's first use)" },
  { env: 'PLATFORM_LOOP_POLLING', default: 'true', description: "Let the node's event loop poll instead of sleeping for 1 ms after each request arrives and while a sandbox call runs, only while it has time to spare and at most half a core: fewer slow wake-ups on small virtual machines, at some idle CPU (`true` or `false`)" },
  { env: 'PLATFORM_WRITE_TIMEOUT_MS', default: '30000', description: 'A connection whose client takes none of its queued response for this long is closed (0..3600000, 0: never); idle connections and quiet streams are not affected' },
  { env: 'PLATFORM_SEED_DEMO', default: 'true', description: 'Create the demo tenant on an empty database (`true` or `false`)' },
  { env: 'PLATFORM_WORKSPACES_DIR', default: '$PLATFORM_DATA_DIR/workspaces', description: "Root of the workspace directories (one per account, gateway or agent, and user); a plugin's filesystem grants resolve inside its caller's one" },
  { env: 'PLATFORM_MCP_CALL_PRICE', default: '1', description: 'Credits one MCP `tools/call` reserves from the account budget (0..1000000)' },
  { env: 'PLATFORM_MCP_REQUEST_RATE', default: '600', description: 'MCP tools/list + tools/call per minute per gateway per caller (the spec value; raise it only for load tests)' },
  { env: 'PLATFORM_MCP_INITIALIZE_RATE', default: '60', description: 'MCP initialize per minute per gateway per caller (the spec value; raise it only for load tests)' },
  { env: 'PLATFORM_LANE_QUEUE', default: '256', description: "Calls an account may have waiting for the sandbox beyond those running; more are refused as overloaded (1..100000)" },
  { env: 'PLATFORM_MODEL_PROVIDERS', default: '(none)', description: 'OpenAI-compatible model providers, `name=base-url` separated by commas (e.g. `openrouter=https://openrouter.ai/api/v1`); each one\'s API key is read from `PLATFORM_MODEL_<NAME>_API_KEY`. Agents name a model as `name/model`' },
  { env: 'PLATFORM_SCRIPTED_RULES', default: '(the demo rules)', description: 'Rules file of the scripted model the node serves on loopback as provider `scripted` (docs/scripted-model.md)' },
  { env: 'PLATFORM_AGENT_MAX_STEPS', default: '8', description: 'Model turns an agent run takes at most (1..100); a run still calling tools after them fails' },
  { env: 'PLATFORM_AGENT_STEP_TIMEOUT_SECONDS', default: '120', description: 'Limit of one model turn or one round of tool calls of an agent run (1..3600); past it the task fails' },
  { env: 'PLATFORM_APPROVAL_TTL_SECONDS', default: '3600', description: 'How long an approval gate waits for a decision (1..604800); then it expires, which denies the call' },
  { env: 'PLATFORM_ATTACHMENT_QUOTA_BYTES', default: '1073741824', description: 'Bytes of attachments (A2A `raw` and `url` file parts) one account may hold (1048576..1099511627776); a message that would pass it is refused with `A2A_ATTACHMENT_QUOTA_EXCEEDED`' },
  { env: 'PLATFORM_FILE_LINK_TTL_SECONDS', default: '3600', description: 'Lifetime of a presigned file URL (`GET /v1/files/{id}`, `POST /v1/attachments/{id}/url`) when the caller asks for none (60..604800)' },
  { env: 'PLATFORM_DEFAULT_MODEL', default: 'scripted/demo', description: 'Model of an agent created without `--model` (`provider/model`)' },
  { env: 'PLATFORM_PLUGIN_PRIVATE_NETWORK', default: 'false', description: 'Development only: let plugins reach loopback, private, link-local and metadata addresses over wasi:http (`true` or `false`)' },
  { env: 'PLATFORM_PUSH_ALLOW_LOOPBACK', default: 'false', description: 'Development and tests only: admit A2A push receivers on loopback (`localhost`, 127.0.0.0/8, `::1`), over plain `http` too (`true` or `false`)' },
  { env: 'PLATFORM_EGRESS_ALLOW_LOOPBACK', default: 'false', description: "Development and tests only: let the platform's outbound requests for tenants (attachment `url` parts, ...) reach loopback addresses, over plain http too; other private ranges stay refused (`true` or `false`)" },
  { env: 'PLATFORM_EGRESS_EXTRA_CA_FILE', default: '(none)', description: "Development and tests only: a PEM file of certificate authorities the platform's outbound requests (push deliveries, attachment `url` parts) trust besides the system's, for receivers with certificates of a private CA" },
  { env: 'PLATFORM_CHROMIUM_PATH', default: '/usr/bin/chromium if present', description: 'The Chromium the Browser built-in launches for `browser_screenshot`, `browser_pdf` and `browser_snapshot` (one headless browser per capture, every request through egress); `none`, or no Chromium there, and those tools answer that Chromium is not installed on this node' },
  { env: 'PLATFORM_SEARXNG_URL', default: '(none)', description: 'The SearXNG instance (JSON format enabled in its settings) the Web Search built-in asks, through egress: `https`, or a loopback address with `PLATFORM_EGRESS_ALLOW_LOOPBACK`; unset, `web_search` answers that web search is not configured' },
  { env: 'PLATFORM_PUSH_RESERVED_SLOTS', default: '32', description: 'A2A push deliveries of terminal and interrupt states (the reserved lane) in flight at once per node (1..1024); one account holds at most half of them' },
  { env: 'PLATFORM_PUSH_BEST_EFFORT_SLOTS', default: '16', description: 'A2A push deliveries of WORKING and artifact progress (the best-effort lane) in flight at once per node (1..1024); one account holds at most half of them' },
  { env: 'PLATFORM_PUSH_RESERVED_QUEUE', default: '10000', description: 'Reserved-lane push deliveries one account may have waiting per node (1..1000000); past it a delivery is given up and logged' },
  { env: 'PLATFORM_PUSH_BEST_EFFORT_QUEUE', default: '256', description: 'Best-effort push deliveries one account may have waiting per node (1..100000); past it the oldest is dropped (a newer update of the same task and config replaces the waiting one)' },
  { env: 'PLATFORM_PUSH_TIMEOUT_MS', default: '10000', description: 'Deadline of one push delivery in milliseconds, connection to response (100..10000)' },
  { env: 'PLATFORM_PUSH_RETRY_DELAY_MS', default: '1000', description: 'Wait before the one retry of a failed reserved-lane push delivery, in milliseconds (0..60000)' },
];

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
  }
}

const DOMAIN_RE = /^(?=.{1,200}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;
const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
const LOG_FORMATS: readonly PlatformConfig['logFormat'][] = ['auto', 'json', 'pretty'];

export function loadConfig(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): PlatformConfig {
  const problems: string[] = [];
  const str = (name: string, dflt: string) => {
    const v = env[name];
    return v === undefined || v === '' ? dflt : v.trim();
  };
  const int = (name: string, dflt: number, min: number, max: number) => {
    const raw = str(name, String(dflt));
    if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
      problems.push(`${name}=${JSON.stringify(raw)}: expected an integer from ${min} to ${max}`);
      return dflt;
    }
    return Number(raw);
  };
  const port = int('PORT', 8080, 0, 65535);
  const domain = str('PLATFORM_DOMAIN', 'localhost').toLowerCase();
  if (!DOMAIN_RE.test(domain)) problems.push(`PLATFORM_DOMAIN=${JSON.stringify(domain)}: expected a DNS name such as localhost or example.com`);
  // The files are read at start (edge/tls-credentials.ts), not here: every CLI command loads this configuration.
  const tlsCert = str('PLATFORM_TLS_CERT', '');
  const tlsKey = str('PLATFORM_TLS_KEY', '');
  if (tlsCert && !tlsKey) problems.push('PLATFORM_TLS_CERT is set without PLATFORM_TLS_KEY: the node needs both files to serve HTTPS');
  if (tlsKey && !tlsCert) problems.push('PLATFORM_TLS_KEY is set without PLATFORM_TLS_CERT: the node needs both files to serve HTTPS');
  const scheme = str('PLATFORM_PUBLIC_SCHEME', tlsCert ? 'https' : 'http');
  if (scheme !== 'http' && scheme !== 'https') problems.push(`PLATFORM_PUBLIC_SCHEME=${JSON.stringify(scheme)}: expected http or https`);
  // An http URL for a port that speaks only TLS would be printed, signed into tokens and answered by nothing.
  if (tlsCert && scheme === 'http') problems.push('PLATFORM_PUBLIC_SCHEME="http": the node serves HTTPS (PLATFORM_TLS_CERT is set), so its public URLs are https; leave it unset or set https');
  const logLevel = str('LOG_LEVEL', 'info');
  if (!(LEVELS as readonly string[]).includes(logLevel)) problems.push(`LOG_LEVEL=${JSON.stringify(logLevel)}: expected one of ${LEVELS.join(', ')}`);
  const logFormat = str('PLATFORM_LOG_FORMAT', 'auto');
  if (!LOG_FORMATS.includes(logFormat as PlatformConfig['logFormat'])) problems.push(`PLATFORM_LOG_FORMAT=${JSON.stringify(logFormat)}: expected one of ${LOG_FORMATS.join(', ')}`);
  const metricsToken = str('PLATFORM_METRICS_TOKEN', '') || null;
  if (metricsToken && !/^[A-Za-z0-9._~+/=-]{32,512}$/.test(metricsToken)) problems.push('PLATFORM_METRICS_TOKEN: expected 32 to 512 letters, digits or -._~+/= (e.g. `openssl rand -hex 32`)');
  const metricsLoopback = str('PLATFORM_METRICS_ALLOW_LOOPBACK', 'false');
  if (metricsLoopback !== 'true' && metricsLoopback !== 'false') problems.push(`PLATFORM_METRICS_ALLOW_LOOPBACK=${JSON.stringify(metricsLoopback)}: expected true or false`);
  const databaseUrl = str('DATABASE_URL', '') || null;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) problems.push('DATABASE_URL: expected a postgres:// or postgresql:// URL');
  const natsUrl = str('NATS_URL', '') || null;
  if (natsUrl && !/^(nats|tls):\/\//.test(natsUrl)) problems.push('NATS_URL: expected a nats:// or tls:// URL');
  if (natsUrl && !databaseUrl) problems.push('NATS_URL is set without DATABASE_URL: a cluster shares one PostgreSQL (PGlite serves a single process)');
  const nodeId = str('PLATFORM_NODE_ID', '') || null;
  if (nodeId && !/^[A-Za-z0-9_-]{1,64}$/.test(nodeId)) problems.push(`PLATFORM_NODE_ID=${JSON.stringify(nodeId)}: use 1-64 letters, digits, - or _`);
  const clusterName = str('PLATFORM_CLUSTER', 'platform');
  if (!/^[a-z0-9_]{1,32}$/.test(clusterName)) problems.push(`PLATFORM_CLUSTER=${JSON.stringify(clusterName)}: use 1-32 lowercase letters, digits or _`);
  const prepare = str('PLATFORM_DB_PREPARE', 'true');
  if (prepare !== 'true' && prepare !== 'false') problems.push(`PLATFORM_DB_PREPARE=${JSON.stringify(prepare)}: expected true or false`);
  const ahead = str('PLATFORM_COMPILE_AHEAD', 'true');
  if (ahead !== 'true' && ahead !== 'false') problems.push(`PLATFORM_COMPILE_AHEAD=${JSON.stringify(ahead)}: expected true or false`);
  const polling = str('PLATFORM_LOOP_POLLING', 'true');
  if (polling !== 'true' && polling !== 'false') problems.push(`PLATFORM_LOOP_POLLING=${JSON.stringify(polling)}: expected true or false`);
  const seed = str('PLATFORM_SEED_DEMO', 'true');
  if (seed !== 'true' && seed !== 'false') problems.push(`PLATFORM_SEED_DEMO=${JSON.stringify(seed)}: expected true or false`);
  const privateNetwork = str('PLATFORM_PLUGIN_PRIVATE_NETWORK', 'false');
  if (privateNetwork !== 'true' && privateNetwork !== 'false') problems.push(`PLATFORM_PLUGIN_PRIVATE_NETWORK=${JSON.stringify(privateNetwork)}: expected true or false`);
  const pushLoopback = str('PLATFORM_PUSH_ALLOW_LOOPBACK', 'false');
  if (pushLoopback !== 'true' && pushLoopback !== 'false') problems.push(`PLATFORM_PUSH_ALLOW_LOOPBACK=${JSON.stringify(pushLoopback)}: expected true or false`);
  const egressLoopback = str('PLATFORM_EGRESS_ALLOW_LOOPBACK', 'false');
  if (egressLoopback !== 'true' && egressLoopback !== 'false') problems.push(`PLATFORM_EGRESS_ALLOW_LOOPBACK=${JSON.stringify(egressLoopback)}: expected true or false`);
  const searxng = str('PLATFORM_SEARXNG_URL', '');
  if (searxng && !/^https?:\/\/[^\s/?#]+(\/[^\s?#]*)?$/.test(searxng)) problems.push(`PLATFORM_SEARXNG_URL=${JSON.stringify(searxng)}: expected the http(s) URL of a SearXNG instance, without query or fragment`);
  const modelProviders: PlatformConfig['modelProviders'] = [];
  for (const entry of str('PLATFORM_MODEL_PROVIDERS', '').split(',').map((e) => e.trim()).filter(Boolean)) {
    const at = entry.indexOf('=');
    const name = at > 0 ? entry.slice(0, at).trim() : '';
    const baseUrl = at > 0 ? entry.slice(at + 1).trim() : '';
    if (!/^[a-z0-9][a-z0-9-]{0,31}$/.test(name) || name === 'scripted') {
      problems.push(`PLATFORM_MODEL_PROVIDERS: ${JSON.stringify(entry)}: expected name=base-url with a name of lowercase letters, digits and -, not "scripted"`);
      continue;
    }
    if (!/^https?:\/\/[^\s]+$/.test(baseUrl)) {
      problems.push(`PLATFORM_MODEL_PROVIDERS: ${JSON.stringify(entry)}: the base URL must be an http(s) URL such as https://api.example.com/v1`);
      continue;
    }
    if (modelProviders.some((p) => p.name === name)) problems.push(`PLATFORM_MODEL_PROVIDERS: provider ${name} is listed twice`);
    const apiKey = env[`PLATFORM_MODEL_${name.toUpperCase().replaceAll('-', '_')}_API_KEY`];
    modelProviders.push({ name, baseUrl: baseUrl.replace(/\/+$/, ''), ...(apiKey ? { apiKey } : {}) });
  }
  const defaultModel = str('PLATFORM_DEFAULT_MODEL', 'scripted/demo');
  const provider = defaultModel.slice(0, Math.max(0, defaultModel.indexOf('/')));
  if (!provider || defaultModel.endsWith('/') || (provider !== 'scripted' && !modelProviders.some((p) => p.name === provider))) {
    problems.push(`PLATFORM_DEFAULT_MODEL=${JSON.stringify(defaultModel)}: expected provider/model with a configured provider (scripted${modelProviders.map((p) => `, ${p.name}`).join('')})`);
  }
  const rules = str('PLATFORM_SCRIPTED_RULES', '');
  const config: PlatformConfig = {
    port,
    host: str('HOST', '127.0.0.1'),
    domain,
    publicScheme: scheme === 'https' ? 'https' : 'http',
    publicPort: int('PLATFORM_PUBLIC_PORT', port, 0, 65535),
    tls: tlsCert && tlsKey ? { certFile: path.resolve(cwd, tlsCert), keyFile: path.resolve(cwd, tlsKey) } : null,
    dataDir: path.resolve(cwd, str('PLATFORM_DATA_DIR', './.platform')),
    pgliteTemplateDir: templateDirOf(str('PLATFORM_PGLITE_TEMPLATE_DIR', ''), cwd),
    databaseUrl,
    databasePrepare: prepare === 'true',
    natsUrl,
    leaseMs: int('PLATFORM_LEASE_MS', 3000, 1000, 60_000),
    nodeId,
    clusterName,
    logLevel: logLevel as PlatformConfig['logLevel'],
    logFormat: logFormat as PlatformConfig['logFormat'],
    metricsToken,
    metricsAllowLoopback: metricsLoopback === 'true',
    deviceCodeTtlSeconds: int('PLATFORM_DEVICE_CODE_TTL', 600, 60, 3600),
    devicePollIntervalSeconds: int('PLATFORM_DEVICE_POLL_INTERVAL', 5, 1, 60),
    actorIdleSeconds: int('PLATFORM_ACTOR_IDLE_SECONDS', 120, 1, 86_400),
    shutdownGraceMs: int('PLATFORM_SHUTDOWN_GRACE_MS', 10_000, 0, 600_000),
    maxConnectionsPerAddress: int('PLATFORM_MAX_CONNECTIONS_PER_ADDRESS', 1024, 0, 1_000_000),
    writeTimeoutMs: int('PLATFORM_WRITE_TIMEOUT_MS', 30_000, 0, 3_600_000),
    compileAhead: ahead === 'true',
    loopPolling: polling === 'true',
    seedDemo: seed !== 'false',
    workspacesDir: path.resolve(cwd, str('PLATFORM_WORKSPACES_DIR', path.join(str('PLATFORM_DATA_DIR', './.platform'), 'workspaces'))),
    pluginPrivateNetwork: privateNetwork === 'true',
    pushAllowLoopback: pushLoopback === 'true',
    egressAllowLoopback: egressLoopback === 'true',
    searxngUrl: searxng ? searxng.replace(/\/+$/, '') : null,
    chromiumPath: chromiumPathOf(str('PLATFORM_CHROMIUM_PATH', '')),
    egressExtraCaFile: str('PLATFORM_EGRESS_EXTRA_CA_FILE', '') ? path.resolve(cwd, str('PLATFORM_EGRESS_EXTRA_CA_FILE', '')) : null,
    pushReservedSlots: int('PLATFORM_PUSH_RESERVED_SLOTS', 32, 1, 1024),
    pushBestEffortSlots: int('PLATFORM_PUSH_BEST_EFFORT_SLOTS', 16, 1, 1024),
    pushReservedQueue: int('PLATFORM_PUSH_RESERVED_QUEUE', 10_000, 1, 1_000_000),
    pushBestEffortQueue: int('PLATFORM_PUSH_BEST_EFFORT_QUEUE', 256, 1, 100_000),
    pushTimeoutMs: int('PLATFORM_PUSH_TIMEOUT_MS', 10_000, 100, 10_000),
    pushRetryDelayMs: int('PLATFORM_PUSH_RETRY_DELAY_MS', 1000, 0, 60_000),
    mcpCallPrice: int('PLATFORM_MCP_CALL_PRICE', 1, 0, 1_000_000),
    mcpRequestRate: int('PLATFORM_MCP_REQUEST_RATE', 600, 1, 1_000_000_000),
    mcpInitializeRate: int('PLATFORM_MCP_INITIALIZE_RATE', 60, 1, 1_000_000_000),
    laneQueue: int('PLATFORM_LANE_QUEUE', 256, 1, 100_000),
    modelProviders,
    scriptedRules: rules ? path.resolve(cwd, rules) : null,
    defaultModel,
    agentMaxSteps: int('PLATFORM_AGENT_MAX_STEPS', 8, 1, 100),
    agentStepTimeoutMs: int('PLATFORM_AGENT_STEP_TIMEOUT_SECONDS', 120, 1, 3600) * 1000,
    approvalTtlMs: int('PLATFORM_APPROVAL_TTL_SECONDS', 3600, 1, 604800) * 1000,
    attachmentQuotaBytes: int('PLATFORM_ATTACHMENT_QUOTA_BYTES', 1024 ** 3, 1024 ** 2, 1024 ** 4),
    fileLinkTtlSeconds: int('PLATFORM_FILE_LINK_TTL_SECONDS', 3600, 60, 604800),
  };
  if (problems.length) throw new ConfigError(problems);
  return config;
}

/** Public URLs of the three surfaces. */
export function urls(c: Pick<PlatformConfig, 'publicScheme' | 'publicPort' | 'domain'>) {
  const defaultPort = c.publicScheme === 'https' ? 443 : 80;
  const port = c.publicPort === defaultPort ? '' : `:${c.publicPort}`;
  const origin = (host: string) => `${c.publicScheme}://${host}${port}`;
  return {
    api: origin(`api.${c.domain}`),
    mcp: (handle: string) => origin(`mcp-${handle}.${c.domain}`),
    agent: (handle: string) => origin(`agent-${handle}.${c.domain}`),
  };
}

/** The cache folder of the platform's own node_modules (not the working directory's), unless set; `none`: off. */
function templateDirOf(given: string, cwd: string): string | null {
  if (given === 'none') return null;
  if (given) return path.resolve(cwd, given);
  return path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../node_modules/.cache/agent-platform');
}

/** The operator's Chromium, else Debian's where it is installed; `none` turns the captures off. */
function chromiumPathOf(given: string): string | null {
  if (given === 'none') return null;
  const candidate = given || '/usr/bin/chromium';
  return existsSync(candidate) ? candidate : null;
}
