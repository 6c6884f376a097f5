import { randomBytes, randomUUID } from 'node:crypto';
import { gatewayAddressOf, type AuthMode, type GatewayEvent, type PresentationMode } from '../../actors/index.ts';
import type { GatewayRecord, Store } from '../../store/index.ts';
import type { ActorSystem, TurnResult } from '../core/actor-host/index.ts';
import { isPlatformError, PlatformError } from '../core/errors/index.ts';
import { onMcpGateway, type ToolRegistry } from '../tools/index.ts';
import { effectiveMode, GATEWAY_TOKEN_TTL_SECONDS, metaTools, registerOAuthClient } from '../gateways/index.ts';
import { builtinRef, need, unique, validateHandle } from './checks.ts';
import { requireAccount, requireCapability, requireGateway as findGateway, requirePrincipal } from './resolve.ts';

const AUTH_MODES: readonly AuthMode[] = ['public', 'private', 'private-dcr'];
const PRESENTATION_MODES: readonly PresentationMode[] = ['direct', 'discovery', 'unified', 'adaptive'];
/** A rotated key verifies a little longer than the tokens it signed live, for clocks that disagree. */
const KEY_OVERLAP_MS = 60_000;

const authMode = (v: string | undefined): AuthMode => {
  need(v !== undefined && AUTH_MODES.includes(v as AuthMode), `invalid auth mode ${JSON.stringify(v)}: expected public, private or private-dcr`);
  return v as AuthMode;
};
const presentationMode = (v: string | undefined): PresentationMode => {
  need(v !== undefined && PRESENTATION_MODES.includes(v as PresentationMode), `invalid presentation mode ${JSON.stringify(v)}: expected direct, discovery, unified or adaptive`);
  return v as PresentationMode;
};
const target = (g: { id: string; accountId: string }) => ({ kind: 'gateway' as const, id: g.id, accountId: g.accountId });

/**
 * The operator's commands for MCP gateways. A gateway is a Gateway actor: every change is an event to it, and its
 * projection (in the same transaction) updates the row, the bindings and the keys that every node reads.
 */
export function createGatewayAdmin(deps: { store: Store; actors: ActorSystem; now: () => number; urls: { mcp(h: string): string }; tools: ToolRegistry }) {
  const { store } = deps;

  /** By id or by handle; a retired gateway takes no more commands. */
  async function requireGateway(ref: string, opts: { retired?: boolean } = {}): Promise<GatewayRecord> {
    const g = await findGateway(store, ref);
    if (g.status === 'retired' && !opts.retired) throw new PlatformError('ADMIN_CONFLICT', `gateway ${g.handle} is retired`);
    return g;
  }

  /** Sends one event to the gateway's actor, creating the actor first for a gateway that predates it. */
  async function tell(g: GatewayRecord, event: GatewayEvent): Promise<TurnResult> {
    const address = gatewayAddressOf(g.accountId, g.id);
    try {
      return await deps.actors.ask(address, event);
    } catch (err) {
      if (!isPlatformError(err, 'PLT_ACTOR_NOT_FOUND')) throw err;
      const bindings = (await store.bindings.list(g.accountId, { kind: 'gateway', id: g.id })).map((b) => b.capabilityId);
      await deps.actors
        .create(address, { gatewayId: g.id, accountId: g.accountId, handle: g.handle, authMode: g.authMode, presentationMode: g.presentationMode, bindings })
        .catch((e) => (isPlatformError(e, 'PLT_ACTOR_EXISTS') ? undefined : Promise.reject(e)));
      return deps.actors.ask(address, event);
    }
  }

  const view = (g: GatewayRecord, s?: TurnResult) => {
    const c = (s?.context ?? {}) as { authMode?: string; presentationMode?: string; configVersion?: number };
    const status = s ? (s.status === 'done' ? 'retired' : String(s.value)) : g.status;
    return { id: g.id, handle: g.handle, status, auth_mode: c.authMode ?? g.authMode, presentation_mode: c.presentationMode ?? g.presentationMode, config_version: c.configVersion ?? g.configVersion };
  };

  return {
    async createGateway(p: { account: string; handle: string; auth?: string; presentation?: string }) {
      const { id: accountId } = await requireAccount(store, p.account);
      validateHandle(p.handle);
      const auth = authMode(p.auth ?? 'private');
      const presentation = presentationMode(p.presentation ?? 'adaptive');
      const id = randomUUID();
      // The row claims the handle (unique); the actor's first turn projects its status, configuration and first key.
      await unique(`gateway handle ${p.handle}`, () => store.gateways.create({ id, accountId, handle: p.handle, authMode: auth, presentationMode: presentation }));
      await deps.actors.create(gatewayAddressOf(accountId, id), { gatewayId: id, accountId, handle: p.handle, authMode: auth, presentationMode: presentation });
      return { id, handle: p.handle, url: deps.urls.mcp(p.handle) };
    },

    /** Exposes a capability of the gateway's own account on the gateway (idempotent). */
    async bindGateway(p: { gateway: string; capability: string; by?: string }) {
      const g = await requireGateway(p.gateway);
      // Built-ins are the platform's, not rows of the account: their bindings are kept beside the gateway's plugin
      // bindings, which the Gateway actor's projection owns.
      const builtin = builtinRef(p.capability);
      if (builtin) {
        // Bound, it would still never be listed (tool-registry.ts): the operator hears so now, not from a missing tool.
        if (!onMcpGateway(builtin.family)) throw new PlatformError('ADMIN_INVALID', `${builtin.name} is for agents only and never appears on an MCP gateway: bind it to an agent`);
        const changed = await store.builtinBindings.bind(g.accountId, target(g), builtin.id, p.by ?? 'operator');
        deps.tools.invalidate(target(g));
        return { gateway_id: g.id, capability_id: builtin.id, bound: true, changed };
      }
      const capability = await requireCapability(store, g.accountId, p.capability, "the gateway's account");
      const s = await tell(g, { type: 'BIND', capabilityId: capability });
      return { gateway_id: g.id, capability_id: capability, bound: true, changed: s.replies.some((r) => r.changed === true) };
    },

    async unbindGateway(p: { gateway: string; capability: string }) {
      const g = await requireGateway(p.gateway);
      const builtin = builtinRef(p.capability);
      if (builtin) {
        if (!(await store.builtinBindings.unbind(g.accountId, target(g), builtin.id))) throw new PlatformError('ADMIN_NOT_FOUND', `built-in ${builtin.id} is not bound to gateway ${g.handle}`);
        deps.tools.invalidate(target(g));
        return { gateway_id: g.id, capability_id: builtin.id, bound: false };
      }
      const capability = await requireCapability(store, g.accountId, p.capability, "the gateway's account");
      const s = await tell(g, { type: 'UNBIND', capabilityId: capability });
      if (!s.replies.some((r) => r.changed === true)) throw new PlatformError('ADMIN_NOT_FOUND', `capability ${capability} is not bound to gateway ${g.handle}`);
      return { gateway_id: g.id, capability_id: capability, bound: false };
    },

    /** Changes the auth mode or the presentation mode (each change bumps the configuration version). */
    async configureGateway(p: { gateway: string; auth?: string; presentation?: string }) {
      need(p.auth !== undefined || p.presentation !== undefined, 'give --auth, --presentation or both');
      const g = await requireGateway(p.gateway);
      const s = await tell(g, { type: 'CONFIGURE', ...(p.auth !== undefined ? { authMode: authMode(p.auth) } : {}), ...(p.presentation !== undefined ? { presentationMode: presentationMode(p.presentation) } : {}) });
      return view(g, s);
    },

    /** A suspended gateway serves nothing (every request is told so) until it is resumed. */
    async suspendGateway(p: { gateway: string }) {
      const g = await requireGateway(p.gateway);
      return view(g, await tell(g, { type: 'SUSPEND' }));
    },

    async resumeGateway(p: { gateway: string }) {
      const g = await requireGateway(p.gateway);
      return view(g, await tell(g, { type: 'RESUME' }));
    },

    /** For good: a retired gateway serves nothing, and its handle stays taken. */
    async retireGateway(p: { gateway: string }) {
      const g = await requireGateway(p.gateway);
      return view(g, await tell(g, { type: 'RETIRE' }));
    },

    /** A new signing key; tokens of the previous one stay valid until they expire, then a timer drops that key. */
    async rotateGatewayKey(p: { gateway: string }) {
      const g = await requireGateway(p.gateway);
      const kid = `k${deps.now().toString(36)}${randomBytes(3).toString('hex')}`;
      const previousValidUntil = deps.now() + GATEWAY_TOKEN_TTL_SECONDS * 1000 + KEY_OVERLAP_MS;
      await tell(g, { type: 'ROTATE_KEY', kid, previousValidUntil });
      return { gateway_id: g.id, key_id: kid, previous_key_valid_until: new Date(previousValidUntil).toISOString() };
    },

    /**
     * Registers an OAuth client of a gateway out of band (the Private mode's way): public (PKCE, no secret) or
     * confidential; with a service principal it may also use client_credentials. The secret is shown once.
     */
    async createGatewayClient(p: { gateway: string; redirectUris?: string[]; name?: string; principal?: string; public?: boolean }) {
      const g = await requireGateway(p.gateway);
      let principalId: string | null = null;
      if (p.principal !== undefined) {
        const principal = await requirePrincipal(store, p.principal, { accountId: g.accountId, where: `gateway ${g.handle}'s account` });
        need(principal.kind === 'service', `principal ${JSON.stringify(p.principal)} is a user: client credentials are for service principals`);
        principalId = principal.id;
      }
      const redirectUris = p.redirectUris ?? [];
      const grantTypes = [...(redirectUris.length ? ['authorization_code', 'refresh_token'] : []), ...(principalId ? ['client_credentials'] : [])];
      need(grantTypes.length > 0, 'give --redirect-uri (authorization code) or --principal (client credentials), or both');
      try {
        const { client, secret } = await registerOAuthClient(store, g, { redirectUris, authMethod: p.public ? 'none' : 'client_secret_basic', grantTypes, clientName: p.name ?? '', principalId, via: 'operator' });
        return { client_id: client.clientId, ...(secret ? { client_secret: secret } : {}), token_endpoint_auth_method: client.authMethod, grant_types: client.grantTypes, redirect_uris: client.redirectUris };
      } catch (err) {
        if (isPlatformError(err) && err.code.startsWith('OAUTH_')) throw new PlatformError('ADMIN_INVALID', err.message);
        throw err;
      }
    },

    async listGateways(p: { account?: string }) {
      const rows = p.account !== undefined ? await store.gateways.list((await requireAccount(store, p.account)).id) : await store.gateways.all();
      return rows.map((g) => ({ id: g.id, account_id: g.accountId, handle: g.handle, url: deps.urls.mcp(g.handle), status: g.status, auth_mode: g.authMode, presentation_mode: g.presentationMode, config_version: g.configVersion }));
    },

    /** A gateway as its callers see it: URL, modes, and the tools listed to a signed-in caller and to an anonymous one. */
    async showGateway(p: { handle: string }) {
      const g = await requireGateway(p.handle, { retired: true });
      const registry = deps.tools;
      const bound = await registry.bound(target(g));
      const mode = effectiveMode(g.presentationMode, bound.length);
      const listed = async (signedIn: boolean) =>
        mode === 'direct' ? (await registry.visible(target(g), signedIn ? ({} as never) : null)).map((t) => t.name) : metaTools(mode).map((m) => m.name);
      return {
        id: g.id,
        account_id: g.accountId,
        handle: g.handle,
        url: deps.urls.mcp(g.handle),
        status: g.status,
        auth_mode: g.authMode,
        presentation_mode: g.presentationMode,
        config_version: g.configVersion,
        effective_mode: mode,
        bound_tools: bound.map((t) => t.name),
        listed_tools: { signed_in: await listed(true), ...(g.authMode === 'public' ? { anonymous: await listed(false) } : {}) },
      };
    },
  };
}

export type GatewayAdmin = ReturnType<typeof createGatewayAdmin>;
