import { PlatformError } from '../../runtime/index.ts';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Services } from '../../runtime/index.ts';

export const DEVICE_GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:device_code';
const CLIENT_ID_RE = /^[\x21-\x7e]{1,200}$/;

function body(raw: unknown): Record<string, unknown> {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new PlatformError('MGMT_INVALID_BODY', 'malformed request: the body must be a JSON object');
  }
  return raw as Record<string, unknown>;
}

function clientId(b: Record<string, unknown>): string {
  const v = b.client_id;
  if (typeof v !== 'string' || !CLIENT_ID_RE.test(v)) {
    throw new PlatformError('MGMT_INVALID_BODY', 'malformed request: client_id must be a non-empty string of at most 200 visible characters');
  }
  return v;
}

const noStore = (reply: FastifyReply) => reply.header('cache-control', 'no-store').header('pragma', 'no-cache');

/**
 * The two OAuth routes of the management host (device authorization grant). Their bodies are bare, not wrapped in
 * `data`. The host has no other OAuth route: no revocation, introspection or discovery document.
 */
export function oauthRoutes(app: FastifyInstance, services: Services) {
  app.post('/oauth/device/authorize', async (request, reply) => {
    const b = body(request.body);
    const session = await services.deviceFlow.start(clientId(b));
    noStore(reply);
    return session;
  });

  app.post('/oauth/token', async (request, reply) => {
    const b = body(request.body);
    noStore(reply);
    if (typeof b.grant_type !== 'string' || b.grant_type === '') {
      throw new PlatformError('MGMT_INVALID_BODY', 'malformed request: grant_type is required');
    }
    if (typeof b.code !== 'string' || b.code === '') {
      throw new PlatformError('MGMT_INVALID_BODY', 'malformed request: code (the device_code from /oauth/device/authorize) is required and must not be empty');
    }
    const client = clientId(b);
    // An unsupported grant answers exactly like an unknown code (spec §4.1: not distinguishable).
    if (b.grant_type !== DEVICE_GRANT_TYPE) throw new PlatformError('MGMT_OAUTH_UNREDEEMABLE');
    const result = await services.deviceFlow.redeem(b.code, client);
    if (result.kind === 'denied') throw new PlatformError('MGMT_OAUTH_ACCESS_DENIED');
    if (result.kind === 'unredeemable') throw new PlatformError('MGMT_OAUTH_UNREDEEMABLE');
    const { kind: _kind, ...token } = result;
    return token;
  });
}
