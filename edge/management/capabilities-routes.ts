import { PlatformError } from '../../runtime/index.ts';
import type { CapabilityRecord } from '../../store/index.ts';
import { requireAuthority, type AuthServices } from './auth.ts';
import { BAD_PATH, CREDENTIAL, errorResponses } from './openapi.ts';
import { CapabilityList, CapabilityListQuery, CapabilityPath, DEFAULT_LIMIT, OneCapability, type CapabilityWire, type ManagementApp, type PluginVersionWire } from './schemas.ts';

/** Wire shape of a plugin or connector capability (spec §2 Capability). */
export function toWireCapability(c: CapabilityRecord): CapabilityWire {
  return {
    id: c.id,
    account_id: c.accountId,
    name: c.name,
    description: c.description,
    namespace: c.namespace,
    type: c.type,
    is_active: c.activeVersion > 0,
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

export function capabilitiesRoutes(app: ManagementApp, services: AuthServices) {
  app.get(
    '/v1/capabilities',
    {
      // Who is asking is settled before what is asked: a caller without a credential learns nothing from validation.
      preValidation: requireAuthority(services, 'read'),
      schema: {
        operationId: 'listCapabilities',
        tags: ['capabilities'],
        summary: 'List the capabilities of the account',
        description: 'Plugins and connectors of the caller\'s account, one page at a time (read authority).',
        security: CREDENTIAL,
        querystring: CapabilityListQuery,
        response: { 200: CapabilityList, ...errorResponses([400, 403, 500, 503]) },
      },
    },
    async (request) => {
      const { type, namespace, search, limit = DEFAULT_LIMIT, offset = 0 } = request.query;
      const accountId = request.caller!.accountId;
      // Built-in capabilities join this list as each one ships; until then only stored plugins and connectors exist.
      const { items, total } =
        type === 'builtin'
          ? { items: [], total: 0 }
          : await services.store.capabilities.list({
              accountId,
              ...(type ? { type } : {}),
              ...(namespace ? { namespace } : {}),
              ...(search ? { search } : {}),
              limit,
              offset,
            });
      return { data: { capabilities: items.map(toWireCapability), total, limit, offset } };
    },
  );

  // One capability by id (not shaped by the spec; what a client that uploaded follows until its version is active).
  app.get(
    '/v1/capabilities/:id',
    {
      preValidation: requireAuthority(services, 'read'),
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
      const found = await services.store.capabilities.get(request.caller!.accountId, id);
      if (!found) throw new PlatformError('MGMT_CAPABILITY_NOT_FOUND', `no capability ${id} in this account`);
      return { data: toWireCapability(found) };
    },
  );
}
