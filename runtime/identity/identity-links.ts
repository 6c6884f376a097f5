import type { IdentityLink, Store } from '../../store/index.ts';
import { PlatformError } from '../core/errors/index.ts';
import type { Caller } from './authenticate.ts';
import { normalizeUserCode, sha256, userCode } from './secrets.ts';

/** How long a link code may be redeemed. */
export const LINK_CODE_TTL_SECONDS = 600;
/** Bounds of what names an outside identity. */
export const IDENTITY_LIMITS = { provider: 64, externalId: 256, displayName: 200 } as const;
export const PROVIDER_PATTERN = '^[a-z0-9][a-z0-9._-]{0,63}$';

/**
 * Linking an identity outside the platform (a chat workspace's user, a ticket system's account) to a principal
 * (spec §1: `POST /v1/identity/verify` links a platform identity). An integration, holding a service principal's key,
 * asks for a one-time code naming the outside identity and shows it to that person there; the person proves they hold
 * both by posting the code with their own platform credential. From then on the integration can resolve the outside
 * identity to the principal and act for it. Codes are stored hashed, single use, expire after ten minutes, and
 * belong to one account: a user of another account cannot redeem them.
 */
export function createIdentityLinks(deps: { store: Pick<Store, 'identityLinks'>; now: () => number }) {
  return {
    async issueCode(caller: Caller, identity: { provider: string; externalId: string; displayName?: string }): Promise<{ code: string; expiresAt: string }> {
      if (caller.kind !== 'service') throw new PlatformError('MGMT_SERVICE_PRINCIPAL_REQUIRED', 'only a service principal (an integration) issues link codes; a user links with POST /v1/identity/verify');
      const code = userCode();
      const expiresAt = new Date(deps.now() + LINK_CODE_TTL_SECONDS * 1000).toISOString();
      await deps.store.identityLinks.addCode(caller.accountId, {
        codeHash: sha256(code),
        provider: identity.provider,
        externalId: identity.externalId,
        displayName: identity.displayName ?? null,
        createdBy: caller.principalId,
        expiresAt,
      });
      return { code, expiresAt };
    },
    /** Redeems a code for the calling user: their principal is now the outside identity's. */
    async verify(caller: Caller, code: string): Promise<IdentityLink> {
      if (caller.kind !== 'user') throw new PlatformError('MGMT_USER_REQUIRED', 'only a user links an outside identity to themselves; this credential belongs to a service principal');
      const link = await deps.store.identityLinks.redeem(caller.accountId, sha256(normalizeUserCode(code)), caller.principalId, new Date(deps.now()).toISOString());
      if (!link) throw new PlatformError('MGMT_LINK_CODE_INVALID', 'the link code is unknown in this account, was used already, or has expired; ask the integration for a new one');
      return link;
    },
    /**
     * Links visible to the caller: a user sees their own; a service principal, or an admin, may look up any of the
     * account's by provider and outside id (how an integration finds whom it acts for), or list a principal's.
     */
    async list(caller: Caller, q: { provider?: string; externalId?: string; principalId?: string }, seesAll: boolean): Promise<IdentityLink[]> {
      const wide = caller.kind === 'service' || seesAll;
      if (q.provider !== undefined && q.externalId !== undefined) {
        const link = await deps.store.identityLinks.find(caller.accountId, q.provider, q.externalId);
        return link && (wide || link.principalId === caller.principalId) ? [link] : [];
      }
      const principalId = wide && q.principalId ? q.principalId : caller.principalId;
      const links = await deps.store.identityLinks.ofPrincipal(caller.accountId, principalId);
      return q.provider === undefined ? links : links.filter((l) => l.provider === q.provider);
    },
  };
}

export type IdentityLinks = ReturnType<typeof createIdentityLinks>;
