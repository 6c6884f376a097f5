import { PlatformError } from '../../runtime/index.ts';
import type { FastifyInstance } from 'fastify';
import type { CapabilityRecord, StoredCapabilityType } from '../../store/index.ts';
import type { Services } from '../../runtime/index.ts';
import { requireAuthority } from './auth.ts';

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;
const MAX_OFFSET = 1_000_000;
const TYPES = ['plugin', 'builtin', 'connector'] as const;

type Query = Record<string, string | string[] | undefined>;

function one(q: Query, name: string): string | undefined {
  const v = q[name];
  if (Array.isArray(v)) throw new PlatformError('MGMT_INVALID_QUERY', `invalid query parameter ${name}: give it once`);
  return v;
}

function integer(q: Query, name: string, dflt: number, min: number, max: number): number {
  const raw = one(q, name);
  if (raw === undefined) return dflt;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new PlatformError('MGMT_INVALID_QUERY', `invalid query parameter ${name}=${JSON.stringify(raw)}: expected an integer from ${min} to ${max}`);
  }
  return Number(raw);
}

function text(q: Query, name: string, maxLength: number): string | undefined {
  const raw = one(q, name);
  if (raw === undefined || raw === '') return undefined;
  if (raw.length > maxLength) throw new PlatformError('MGMT_INVALID_QUERY', `invalid query parameter ${name}: at most ${maxLength} characters`);
  return raw;
}

/** Wire shape of a plugin or connector capability (spec §2 Capability). */
export function toWireCapability(c: CapabilityRecord) {
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
        permissions: v.permissions,
        resources: v.resources,
      })),
    },
    audit_info: { created_at: c.createdAt, created_by: c.createdBy, updated_at: c.updatedAt, updated_by: c.updatedBy },
  };
}

export function capabilitiesRoutes(app: FastifyInstance, services: Services) {
  app.get('/v1/capabilities', { preHandler: requireAuthority(services, 'read') }, async (request) => {
    const q = request.query as Query;
    const limit = integer(q, 'limit', DEFAULT_LIMIT, 1, MAX_LIMIT);
    const offset = integer(q, 'offset', 0, 0, MAX_OFFSET);
    const type = one(q, 'type');
    if (type !== undefined && !(TYPES as readonly string[]).includes(type)) {
      throw new PlatformError('MGMT_INVALID_QUERY', `invalid query parameter type=${JSON.stringify(type)}: expected plugin, builtin or connector`);
    }
    const namespace = text(q, 'namespace', 200);
    const search = text(q, 'search', 200);
    const accountId = request.caller!.accountId;
    // Built-in capabilities join this list as each one ships; until then only stored plugins and connectors exist.
    const { items, total } =
      type === 'builtin'
        ? { items: [], total: 0 }
        : await services.store.capabilities.list({
            accountId,
            ...(type ? { type: type as StoredCapabilityType } : {}),
            ...(namespace ? { namespace } : {}),
            ...(search ? { search } : {}),
            limit,
            offset,
          });
    return { data: { capabilities: items.map(toWireCapability), total, limit, offset } };
  });

  // One capability by id (not shaped by the spec; what a client that uploaded follows until its version is active).
  app.get('/v1/capabilities/:id', { preHandler: requireAuthority(services, 'read') }, async (request) => {
    const { id } = request.params as { id: string };
    const found = UUID_RE.test(id) ? await services.store.capabilities.get(request.caller!.accountId, id) : null;
    if (!found) throw new PlatformError('MGMT_CAPABILITY_NOT_FOUND', `no capability ${id} in this account`);
    return { data: toWireCapability(found) };
  });
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
