import { randomUUID } from 'node:crypto';
import type { ConnectorKind, Store } from '../../store/index.ts';
import { apiKeyPlacement, findRegistryServer, mcpUpstream, operationsOf, readOpenApi, serverUrlOf, type ConnectorSecret, type Sealer } from '../connectors/index.ts';
import { checkEgressUrl, type EgressOptions } from '../core/egress/index.ts';
import { isPlatformError, PlatformError } from '../core/errors/index.ts';
import { need, unique, validateHandle } from './checks.ts';
import { requireAccount } from './resolve.ts';

/** `Name: value` of one credential header: a token name, a printable value without CR or LF. */
const HEADER = /^([!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}):[ \t]*([\x20-\x7e]{1,4096})$/;
const KINDS: Record<string, ConnectorKind> = { mcp: 'custom-mcp', 'custom-mcp': 'custom-mcp', rest: 'rest', registry: 'mcp-registry', 'mcp-registry': 'mcp-registry' };
/** Who made a connector when no principal is named: the operator, as the nil UUID (audit fields are UUIDs). */
const OPERATOR = '00000000-0000-0000-0000-000000000000';
/** How long a connector's tool list is kept per node before it is listed again (default, bounds). */
const TTL = { default: 300, min: 10, max: 86_400 };

export interface CreateConnectorParams {
  account: string;
  /** `mcp` (a custom MCP server, the default), `rest` (an OpenAPI 3 document) or `registry` (a server of an MCP registry). */
  kind?: string;
  name: string;
  namespace?: string;
  /** mcp: the server's URL; rest: the API's base URL (else the document's first server); registry: the registry's URL. */
  url?: string;
  /** rest: the OpenAPI document, JSON or YAML. */
  spec?: string;
  /** registry: the server's name there (`io.example/weather`). */
  server?: string;
  /** A credential header sent with every request, `Name: value`. */
  header?: string;
  /** rest: a credential put where the document's API key (or bearer) scheme says. */
  apiKey?: string;
  ttl?: number;
  description?: string;
  by?: string;
}

/**
 * The operator's connector commands (the management API has no connector writes, spec §1): a custom MCP server, a
 * REST API described by OpenAPI 3, or a server picked from an MCP registry becomes a capability of type connector in
 * an account, its credentials sealed. Everything is checked before anything is stored: an MCP server must list its
 * tools, an OpenAPI document must validate and describe operations. Runs in the operator's process (the CLI, or the
 * node for the operator's HTTP call): documents come from the operator, never from a tenant.
 */
export function createConnectorAdmin(deps: { store: Store; sealer: Sealer; egress: Pick<EgressOptions, 'allowLoopback' | 'ca' | 'resolve'> }) {
  const { store } = deps;
  const checkUrl = (url: string, what: string) => {
    try {
      checkEgressUrl(url, { allowLoopback: deps.egress.allowLoopback === true });
    } catch (err) {
      throw new PlatformError('ADMIN_INVALID', `invalid ${what}: ${(err as Error).message}`);
    }
  };

  /** A custom MCP server's tools, listed once now: one that cannot list them is refused before it is stored. */
  async function listUpstream(url: string, headers: Record<string, string>) {
    const upstream = mcpUpstream(url, headers, deps.egress);
    try {
      return (await upstream.tools()).map((t) => ({ name: t.name, description: t.description }));
    } catch (err) {
      throw isPlatformError(err) ? err : new PlatformError('CONNECTOR_UNAVAILABLE', `the MCP server at ${url} could not list its tools: ${(err as Error).message}`);
    } finally {
      await upstream.close();
    }
  }

  return {
    async createConnector(p: CreateConnectorParams) {
      const { id: accountId } = await requireAccount(store, p.account);
      const kind = KINDS[p.kind ?? 'mcp'];
      need(kind !== undefined, `invalid connector kind ${JSON.stringify(p.kind)}: expected mcp (a custom MCP server), rest (an OpenAPI 3 document) or registry (a server of an MCP registry)`);
      need(typeof p.name === 'string' && p.name.trim().length > 0 && p.name.length <= 100, 'a connector needs a name of 1 to 100 characters');
      const namespace = p.namespace ?? p.name.trim().toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
      validateHandle(namespace);
      const secret: ConnectorSecret = { headers: {} };
      if (p.header !== undefined) {
        const m = HEADER.exec(p.header);
        need(m !== null, 'a header is "Name: value", printable ASCII without line breaks');
        secret.headers[m![1]!] = m![2]!;
      }
      const ttl = p.ttl ?? TTL.default;
      need(Number.isInteger(ttl) && ttl >= TTL.min && ttl <= TTL.max, `ttl takes ${TTL.min} to ${TTL.max} seconds`);

      let url: string;
      let operations: unknown[];
      let source: { registry: string; server: string; version: string } | null = null;
      let description = p.description;
      if (kind === 'rest') {
        need(typeof p.spec === 'string', 'a REST connector needs its OpenAPI 3 document (--spec <file>)');
        const doc = await readOpenApi(p.spec!);
        const ops = operationsOf(doc);
        const base = p.url ?? serverUrlOf(doc);
        need(base !== null && base !== undefined, 'the document names no absolute server URL: give the base URL (--url)');
        checkUrl(base!, 'base URL');
        if (p.apiKey !== undefined) {
          const placement = apiKeyPlacement(doc);
          need(placement !== null, 'the document declares no API key or bearer scheme for --api-key: send the credential with --header instead');
          need(/^[\x20-\x7e]{1,4096}$/.test(p.apiKey), 'an API key is printable ASCII without line breaks');
          if (placement!.in === 'header') secret.headers[placement!.name] = placement!.prefix + p.apiKey;
          else secret.query = { [placement!.name]: p.apiKey };
        }
        url = base!;
        operations = ops;
        description ??= String(doc.info?.description ?? doc.info?.title ?? `Operations of the API at ${new URL(url).origin}`).slice(0, 2_000);
      } else {
        need(p.apiKey === undefined, '--api-key is for REST connectors: send an MCP server its credential with --header');
        need(typeof p.url === 'string', kind === 'mcp-registry' ? "a registry connector needs the registry's URL (--url)" : "a connector needs the MCP server's URL (--url)");
        checkUrl(p.url!, kind === 'mcp-registry' ? 'registry URL' : 'connector url');
        if (kind === 'mcp-registry') {
          need(typeof p.server === 'string' && p.server.length > 0 && p.server.length <= 200, "a registry connector needs the server's name in the registry (--server)");
          const found = await findRegistryServer(p.url!, p.server!, deps.egress);
          const missing = found.headers.filter((h) => h.required && secret.headers[h.name] === undefined).map((h) => h.name);
          need(missing.length === 0, `the registry says ${found.name} needs the header ${missing.join(', ')}: give it with --header`);
          checkUrl(found.url, `server URL from the registry (${found.url})`);
          source = { registry: p.url!, server: found.name, version: found.version };
          url = found.url;
          description ??= found.description || `The MCP server ${found.name} from the registry at ${new URL(p.url!).origin}`;
        } else {
          url = p.url!;
          description ??= `Tools of the MCP server at ${new URL(url).origin}`;
        }
        operations = await listUpstream(url, secret.headers);
      }

      const id = randomUUID();
      const hasSecret = Object.keys(secret.headers).length > 0 || secret.query !== undefined;
      await unique(`namespace ${namespace}`, () =>
        store.tx(async (r) => {
          await r.capabilities.create({ id, accountId, type: 'connector', name: p.name.trim(), namespace, description: description!, createdBy: p.by ?? OPERATOR });
          await r.connectors.create({ capabilityId: id, accountId, kind, url, sealedSecret: hasSecret ? deps.sealer.seal(secret) : null, ttlMs: ttl * 1000, operations, source });
        }),
      );
      return { id, account_id: accountId, kind, name: p.name.trim(), namespace, url, ...(source ? { source } : {}), tools: operations.map((o) => (o as { name: string }).name) };
    },

    /** The account's connectors: where each one calls and how many tools it brings; never its credentials. */
    async listConnectors(p: { account: string }) {
      const { id: accountId } = await requireAccount(store, p.account);
      return (await store.connectors.list(accountId)).map((c) => ({
        id: c.capabilityId,
        name: c.name,
        namespace: c.namespace,
        kind: c.kind,
        url: c.url,
        tools: c.operations.length,
        credentials: c.sealedSecret !== null,
        source: c.source,
      }));
    },
  };
}
