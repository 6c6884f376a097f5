import { BUILTINS, connectorToolName, PlatformError, type Builtin } from '../../runtime/index.ts';
import type { CapabilityRecord, ConnectorRecord } from '../../store/index.ts';
import { requireAuthority, type AuthServices } from './auth.ts';
import { BAD_PATH, CREDENTIAL, errorResponses } from './openapi.ts';
import { CapabilityList, CapabilityListQuery, CapabilityPath, DEFAULT_LIMIT, OneCapability, type CapabilityWire, type ManagementApp, type PluginVersionWire } from './schemas.ts';

/** A connector's URL as shown to readers: no credentials, no query (some servers take a token there). */
const shownUrl = (url: string) => {
  const u = new URL(url);
  return `${u.origin}${u.pathname}`;
};

/** What a connector is made of, in place of a plugin's versions. */
function connectorSpecifications(k: ConnectorRecord): CapabilityWire['specifications'] {
  return {
    type: 'connector',
    kind: k.kind,
    url: shownUrl(k.url),
    source: k.source,
    ttl_seconds: Math.round(k.ttlMs / 1000),
    tools: (k.operations as { name: string; description?: string }[]).map((o) => ({ name: connectorToolName(k.namespace, o.name), description: o.description ?? '' })),
  };
}

/** Wire shape of a plugin or connector capability (spec §2 Capability). */
export function toWireCapability(c: CapabilityRecord, connector?: ConnectorRecord): CapabilityWire {
  const wire = pluginWire(c);
  return connector ? { ...wire, specifications: connectorSpecifications(connector) } : wire;
}

function pluginWire(c: CapabilityRecord): CapabilityWire {
  return {
    id: c.id,
    account_id: c.accountId,
    name: c.name,
    description: c.description,
    namespace: c.namespace,
    type: c.type,
    // A connector serves as soon as the operator made it (its tools are its server's); a plugin once activated.
    is_active: c.type === 'connector' || c.activeVersion > 0,
    active_version: c.activeVersion,
    logo_url: c.logoUrl,
    specifications: {
      type: c.type,
      active_version: c.activeVersion,
      versions: c.versions.map((v) => ({
        version_number: v.versionNumber,
        // Not in the spec's table: the version's lifecycle (dormant, activating, active, superseded) and why its last
        // activation failed, so a client that uploaded can tell when, and whether, the version serves.
        status: v.status ?? 'dormant',
        status_reason: v.statusReason ?? null,
        created_at: v.createdAt,
        created_by: v.createdBy,
        tools: v.tools.map((t) => ({ name: t.name, description: t.description })),
        metadata: {
          author: String(v.metadata.author ?? ''),
          license: String(v.metadata.license ?? ''),
          tags: Array.isArray(v.metadata.tags) ? v.metadata.tags.map(String) : [],
          homepage: String(v.metadata.homepage ?? ''),
        },
        // Stored as the admitted plugin config wrote them (the store keeps them as plain JSON).
        permissions: v.permissions as PluginVersionWire['permissions'],
        resources: v.resources as PluginVersionWire['resources'],
      })),
    },
    audit_info: { created_at: c.createdAt, created_by: c.createdBy, updated_at: c.updatedAt, updated_by: c.updatedBy },
  };
}

/** Built-ins are the platform's since it first shipped them: their audit names the platform, not a principal. */
const PLATFORM_PRINCIPAL = '00000000-0000-0000-0000-000000000000';
const BUILTINS_SINCE = '2026-11-24T00:00:00.000Z';

/** Wire shape of a built-in (spec §2: a fixed string id, `specifications {type, kind, sort_order, config}`). */
export function toWireBuiltin(b: Builtin): CapabilityWire {
  return {
    id: b.id,
    name: b.name,
    description: b.description,
    namespace: b.namespace,
    type: 'builtin',
    // Built-ins always serve, at the platform's own version.
    is_active: true,
    active_version: 1,
    logo_url: '',
    specifications: { type: 'builtin', kind: b.kind, sort_order: b.sortOrder, config: b.config, tools: b.operations.map((o) => ({ name: o.name, description: o.description })) },
    audit_info: { created_at: BUILTINS_SINCE, created_by: PLATFORM_PRINCIPAL, updated_at: BUILTINS_SINCE, updated_by: PLATFORM_PRINCIPAL },
  };
}

/** The built-ins a list query matches (the same filters as the stored capabilities'). */
function matchingBuiltins(q: { type?: string; namespace?: string; search?: string }): Builtin[] {
  if (q.type !== undefined && q.type !== 'builtin') return [];
  const needle = q.search?.toLowerCase();
  return BUILTINS.filter((b) => (q.namespace === undefined || b.namespace === q.namespace) && (needle === undefined || b.name.toLowerCase().includes(needle) || b.description.toLowerCase().includes(needle)));
}

export function capabilitiesRoutes(app: ManagementApp, services: AuthServices) {
  app.get(
    '/v1/capabilities',
    {
      // Who is asking is settled before what is asked: a caller without a credential learns nothing from validation.
      onRequest: requireAuthority(services, 'read'),
      schema: {
        operationId: 'listCapabilities',
        tags: ['capabilities'],
        summary: 'List the capabilities of the account',
        description: 'The built-ins (first, by sort order), then the plugins and connectors of the caller\'s account, one page at a time (read authority).',
        security: CREDENTIAL,
        querystring: CapabilityListQuery,
        response: { 200: CapabilityList, ...errorResponses([400, 403, 500, 503]) },
      },
    },
    async (request) => {
      const { type, namespace, search, limit = DEFAULT_LIMIT, offset = 0 } = request.query;
      const accountId = request.caller!.accountId;
      // The built-ins first (by sort order), then the account's plugins and connectors: one list, one offset.
      const builtins = matchingBuiltins({ ...(type ? { type } : {}), ...(namespace ? { namespace } : {}), ...(search ? { search } : {}) });
      const page = builtins.slice(offset, offset + limit).map(toWireBuiltin);
      if (type === 'builtin') return { data: { capabilities: page, total: builtins.length, limit, offset } };
      const storedOffset = Math.max(0, offset - builtins.length);
      const room = limit - page.length;
      const stored = await services.store.capabilities.list({
        accountId,
        ...(type ? { type } : {}),
        ...(namespace ? { namespace } : {}),
        ...(search ? { search } : {}),
        limit: Math.max(1, room),
        offset: storedOffset,
      });
      const mine = stored.items.slice(0, room);
      const connectors = new Map((await services.store.connectors.many(accountId, mine.filter((c) => c.type === 'connector').map((c) => c.id))).map((k) => [k.capabilityId, k]));
      const items = [...page, ...mine.map((c) => toWireCapability(c, connectors.get(c.id)))];
      return { data: { capabilities: items, total: builtins.length + stored.total, limit, offset } };
    },
  );

  // One capability by id (not shaped by the spec; what a client that uploaded follows until its version is active).
  app.get(
    '/v1/capabilities/:id',
    {
      onRequest: requireAuthority(services, 'read'),
      config: { malformedPath: 'MGMT_CAPABILITY_NOT_FOUND' },
      schema: {
        operationId: 'getCapability',
        tags: ['capabilities'],
        summary: 'Read one capability',
        description: 'Follow an upload until its version is `active` (read authority). An id that is not a UUID names no capability.',
        security: CREDENTIAL,
        params: CapabilityPath,
        response: { 200: OneCapability, ...errorResponses([400, 403, 404, 500, 503], BAD_PATH) },
      },
    },
    async (request) => {
      const { id } = request.params;
      if (id.startsWith('builtin-')) {
        const b = BUILTINS.find((x) => x.id === id);
        if (!b) throw new PlatformError('MGMT_CAPABILITY_NOT_FOUND', `no built-in ${id}`);
        return { data: toWireBuiltin(b) };
      }
      const found = await services.store.capabilities.get(request.caller!.accountId, id);
      if (!found) throw new PlatformError('MGMT_CAPABILITY_NOT_FOUND', `no capability ${id} in this account`);
      return { data: toWireCapability(found, found.type === 'connector' ? ((await services.store.connectors.get(found.accountId, found.id)) ?? undefined) : undefined) };
    },
  );
}
