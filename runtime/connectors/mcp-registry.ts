import { egressFetch, type EgressOptions } from '../core/egress/index.ts';
import { PlatformError } from '../core/errors/index.ts';

/** A server of an MCP registry the platform can connect: its name and version there, and its Streamable HTTP URL. */
export interface RegistryServer {
  name: string;
  version: string;
  description: string;
  url: string;
  /** Headers the registry says the server needs (the operator supplies their values). */
  headers: { name: string; required: boolean; secret: boolean }[];
}

/** Pages of `GET /v0/servers` read at most while looking for one server. */
const MAX_PAGES = 20;

const unavailable = (message: string) => new PlatformError('CONNECTOR_UNAVAILABLE', message);

/**
 * Finds one server in a registry speaking the official MCP Registry API: `GET /v0/servers?search=<name>` (its
 * latest version), paged with `metadata.nextCursor`, entries as `{server, _meta}` (older registries list the server
 * itself). Only a server with a Streamable HTTP remote can become a connector: the platform runs no local packages.
 */
export async function findRegistryServer(registry: string, name: string, egress: Pick<EgressOptions, 'allowLoopback' | 'ca' | 'resolve'>): Promise<RegistryServer> {
  let cursor: string | null = null;
  for (let page = 0; page < MAX_PAGES; page++) {
    const url = new URL('v0/servers', registry.endsWith('/') ? registry : `${registry}/`);
    url.searchParams.set('search', name);
    url.searchParams.set('version', 'latest');
    url.searchParams.set('limit', '100');
    if (cursor) url.searchParams.set('cursor', cursor);
    const res = await egressFetch(url, { ...egress, headers: { accept: 'application/json' } }).catch((err: Error) => {
      throw unavailable(`the registry at ${url.origin} could not be reached: ${err.message}`);
    });
    if (res.status !== 200) throw unavailable(`the registry at ${url.origin} answered ${res.status} to GET /v0/servers`);
    let body: { servers?: unknown[]; metadata?: { nextCursor?: string | null } };
    try {
      body = JSON.parse(res.body.toString('utf8'));
    } catch {
      throw unavailable(`the registry at ${url.origin} did not answer JSON`);
    }
    for (const entry of Array.isArray(body.servers) ? body.servers : []) {
      const server = ((entry as { server?: unknown }).server ?? entry) as Record<string, any>;
      if (server?.name !== name) continue;
      const remote = (Array.isArray(server.remotes) ? server.remotes : []).find((r: any) => r?.type === 'streamable-http' && typeof r.url === 'string');
      if (!remote) throw new PlatformError('ADMIN_INVALID', `the registry's server ${name} has no Streamable HTTP remote (only packages to run locally, or SSE), so it cannot be connected`);
      return {
        name,
        version: String(server.version ?? ''),
        description: String(server.description ?? ''),
        url: remote.url,
        headers: (Array.isArray(remote.headers) ? remote.headers : []).map((h: any) => ({ name: String(h.name), required: h.isRequired === true, secret: h.isSecret === true })),
      };
    }
    cursor = body.metadata?.nextCursor ?? null;
    if (!cursor) break;
  }
  throw new PlatformError('ADMIN_NOT_FOUND', `the registry at ${new URL(registry).origin} lists no server named ${name}`);
}
