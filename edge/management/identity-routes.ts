import { hasAuthority, type Services } from '../../runtime/index.ts';
import type { IdentityLink } from '../../store/index.ts';
import { requireAuthority, type AuthServices } from './auth.ts';
import { LinkCode, LinkCodeBody, LinkList, LinkQuery, OneLink, VerifyBody, type IdentityLinkWire } from './files-schemas.ts';
import { CREDENTIAL, errorResponses } from './openapi.ts';
import type { ManagementApp } from './schemas.ts';

const toWire = (l: IdentityLink): IdentityLinkWire => ({ provider: l.provider, external_id: l.externalId, principal_id: l.principalId, display_name: l.displayName, linked_at: l.linkedAt });

/**
 * Identity links (spec §1: `POST /v1/identity/verify` links a platform identity). An integration's service principal
 * issues a one-time code for an outside identity; the person posts it with their own credential; the integration
 * then resolves the outside identity to the principal (runtime/identity/identity-links.ts).
 */
export function identityRoutes(app: ManagementApp, services: AuthServices & Pick<Services, 'identityLinks'>) {
  const shared = { tags: ['identity'], security: CREDENTIAL };

  app.post(
    '/v1/identity/link-codes',
    {
      onRequest: requireAuthority(services, 'execute'),
      schema: {
        ...shared,
        operationId: 'createIdentityLinkCode',
        summary: 'Issue a link code for an outside identity',
        description: 'For integrations (service principals): a code, valid ten minutes, that the person with this outside identity posts to `POST /v1/identity/verify`.',
        body: LinkCodeBody,
        response: { 201: LinkCode, ...errorResponses([400, 403, 500, 503]) },
      },
    },
    async (request, reply) => {
      const b = request.body;
      const { code, expiresAt } = await services.identityLinks.issueCode(request.caller!, { provider: b.provider, externalId: b.external_id, ...(b.display_name !== undefined ? { displayName: b.display_name } : {}) });
      return reply.code(201).send({ data: { code, provider: b.provider, external_id: b.external_id, expires_at: expiresAt } });
    },
  );

  app.post(
    '/v1/identity/verify',
    {
      onRequest: requireAuthority(services, 'read'),
      schema: {
        ...shared,
        operationId: 'verifyIdentity',
        summary: 'Link an outside identity to yourself',
        description: "A user posts the link code an integration showed them: the code's identity is linked to the user (replacing an earlier link of that identity). A code links once.",
        body: VerifyBody,
        response: { 200: OneLink, ...errorResponses([400, 403, 500, 503]) },
      },
    },
    async (request) => ({ data: toWire(await services.identityLinks.verify(request.caller!, request.body.code)) }),
  );

  app.get(
    '/v1/identity/links',
    {
      onRequest: requireAuthority(services, 'read'),
      schema: {
        ...shared,
        operationId: 'listIdentityLinks',
        summary: 'List linked identities',
        description: "A user's own links; a service principal, admin or owner may resolve `provider` + `external_id` to its principal, or list a principal's links.",
        querystring: LinkQuery,
        response: { 200: LinkList, ...errorResponses([400, 403, 500, 503]) },
      },
    },
    async (request) => {
      const c = request.caller!;
      const q = request.query;
      const links = await services.identityLinks.list(c, { ...(q.provider !== undefined ? { provider: q.provider } : {}), ...(q.external_id !== undefined ? { externalId: q.external_id } : {}), ...(q.principal_id !== undefined ? { principalId: q.principal_id } : {}) }, hasAuthority(c.role, 'write'));
      return { data: { links: links.map(toWire) } };
    },
  );
}
