import { randomUUID } from 'node:crypto';
import type { DeviceSessionContext, RedeemOutcome } from '../../actors/index.ts';
import type { Store } from '../../store/index.ts';
import { formatAddress, PLATFORM_ACCOUNT, type Projection } from '../core/actor-host/index.ts';
import { isPlatformError } from '../core/errors/index.ts';
import type { ActorSystem } from '../core/actor-host/index.ts';
import { normalizeUserCode, randomSecret, sha256, userCode } from './secrets.ts';
import { ACCESS_TOKEN_TTL_SECONDS, type TokenSigner } from './tokens.ts';

export const DEVICE_SCOPE = 'platform';

export const deviceSessionAddress = (id: string) => formatAddress({ kind: 'device-session', accountId: PLATFORM_ACCOUNT, id });

export type RedeemResult =
  | { kind: 'token'; access_token: string; token_type: 'Bearer'; expires_in: number; scope: string }
  | { kind: 'denied' }
  /** Pending, unknown, redeemed, expired or another client: the token endpoint must not tell these apart. */
  | { kind: 'unredeemable' };

export interface PendingDeviceSession {
  id: string;
  userCode: string;
  clientId: string;
  state: 'pending' | 'approved' | 'denied';
}

/**
 * The management API's device authorization grant. Each session is a DeviceSession actor; the table row only maps the
 * device code (hashed) and the user code to it. The code's lifetime is a durable timer, so it expires across restarts.
 */
export function createDeviceFlow(deps: {
  store: Pick<Store, 'deviceSessions' | 'accounts'>;
  actors: ActorSystem;
  signer: TokenSigner;
  now: () => number;
  ttlSeconds: number;
  intervalSeconds: number;
  verificationUri: string;
}) {
  async function stateOf(id: string): Promise<DeviceSessionContext & { value: string } | null> {
    const s = await deps.actors.read(deviceSessionAddress(id));
    return s ? { ...(s.context as unknown as DeviceSessionContext), value: String(s.value) } : null;
  }

  return {
    async start(clientId: string) {
      const id = randomUUID();
      const deviceCode = randomSecret(32);
      const expiresAt = deps.now() + deps.ttlSeconds * 1000;
      // A user-code collision (20^8 space) is retried with a fresh code rather than failing the request.
      for (let attempt = 0; ; attempt++) {
        const code = userCode();
        try {
          await deps.store.deviceSessions.create({
            id,
            deviceCodeHash: sha256(deviceCode),
            userCode: code,
            clientId,
            expiresAt: new Date(expiresAt).toISOString(),
          });
          await deps.actors.create(deviceSessionAddress(id), { id, clientId, userCode: code, expiresAt });
          return {
            device_code: deviceCode,
            user_code: code,
            verification_uri: deps.verificationUri,
            verification_uri_complete: `${deps.verificationUri}?user_code=${encodeURIComponent(code)}`,
            expires_in: deps.ttlSeconds,
            interval: deps.intervalSeconds,
          };
        } catch (err) {
          if (attempt >= 3 || (err as { code?: string }).code !== '23505') throw err;
        }
      }
    },

    async redeem(deviceCode: string, clientId: string): Promise<RedeemResult> {
      const row = await deps.store.deviceSessions.byDeviceCodeHash(sha256(deviceCode));
      if (!row) return { kind: 'unredeemable' };
      let state;
      try {
        state = await deps.actors.ask(deviceSessionAddress(row.id), { type: 'REDEEM', clientId });
      } catch (err) {
        if (isPlatformError(err, 'PLT_ACTOR_NOT_FOUND')) return { kind: 'unredeemable' };
        throw err;
      }
      const ctx = state.context as unknown as DeviceSessionContext;
      const outcome = (state.replies.find((r) => r.type === 'reply.redeem') as { outcome?: RedeemOutcome } | undefined)?.outcome;
      if (outcome === 'denied') return { kind: 'denied' };
      if (outcome !== 'issued' || !ctx.grant) return { kind: 'unredeemable' };
      const access_token = await deps.signer.signAccessToken({
        userId: ctx.grant.userId,
        clientId: ctx.clientId,
        accountId: ctx.grant.accountId,
        scope: ctx.grant.scope,
      });
      return { kind: 'token', access_token, token_type: 'Bearer', expires_in: ACCESS_TOKEN_TTL_SECONDS, scope: ctx.grant.scope };
    },

    /** The live session a human typed the code of, or null (unknown, expired or already finished). */
    async lookup(typedCode: string): Promise<PendingDeviceSession | null> {
      const row = await deps.store.deviceSessions.byUserCode(normalizeUserCode(typedCode));
      if (!row) return null;
      const s = await stateOf(row.id);
      if (!s || (s.value !== 'pending' && s.value !== 'approved' && s.value !== 'denied')) return null;
      return { id: row.id, userCode: row.userCode, clientId: row.clientId, state: s.value };
    },

    /** Records the human's decision; false when the session is gone or was already decided. */
    async decide(sessionId: string, user: { userId: string; accountId: string }, approve: boolean): Promise<boolean> {
      try {
        const s = await deps.actors.ask(
          deviceSessionAddress(sessionId),
          approve ? { type: 'APPROVE', userId: user.userId, accountId: user.accountId, scope: DEVICE_SCOPE } : { type: 'DENY', userId: user.userId },
        );
        return s.value === (approve ? 'approved' : 'denied') && (!approve || (s.context as { grant?: { userId?: string } }).grant?.userId === user.userId);
      } catch (err) {
        if (isPlatformError(err, 'PLT_ACTOR_NOT_FOUND')) return false;
        throw err;
      }
    },

  };
}

export type DeviceFlow = ReturnType<typeof createDeviceFlow>;

/** The DeviceSession projection: when a session ends (consumed, denial reported, expired) its lookup row goes too. */
export const deviceSessionProjection: Projection = async (tx, change) => {
  const id = (change.previous?.context as DeviceSessionContext | undefined)?.id;
  if (change.state === null && id && deviceSessionAddress(id) === change.address) await tx.deviceSessions.remove(id);
};
