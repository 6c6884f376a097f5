import { assign, emit, setup } from 'xstate';

/**
 * One MCP gateway. Its lifecycle: active ⇄ suspended (the operator's switch: a suspended gateway serves nothing) →
 * retired (final: it never serves again). Its configuration (auth mode, presentation mode, bound capabilities) changes
 * by events that bump `configVersion`. Its token signing key rotates: the new key signs, the previous one keeps
 * verifying until every token it signed has expired, then a durable timer drops it. Every change is journaled as
 * `gateway.changed` with the whole view, so each node's cached copy follows without reading the database.
 */
export type AuthMode = 'public' | 'private' | 'private-dcr';
export type PresentationMode = 'direct' | 'discovery' | 'unified' | 'adaptive';
export type GatewayStatus = 'active' | 'suspended' | 'retired';

export interface GatewayInput {
  gatewayId: string;
  accountId: string;
  handle: string;
  authMode: AuthMode;
  presentationMode: PresentationMode;
  /** Capabilities bound when the actor starts (a gateway that existed before its actor). */
  bindings?: string[];
}

export interface GatewayKeys {
  /** The key id that signs new tokens. */
  current: string;
  /** The key that signed earlier tokens: it verifies until `dropAt` (epoch ms), when every such token has expired. */
  previous: { kid: string; dropAt: number } | null;
}

export interface GatewayContext {
  gatewayId: string;
  accountId: string;
  handle: string;
  authMode: AuthMode;
  presentationMode: PresentationMode;
  configVersion: number;
  bindings: string[];
  keys: GatewayKeys;
}

/** What every node caches of a gateway, and what `gateway.changed` carries. */
export interface GatewayView {
  id: string;
  accountId: string;
  handle: string;
  status: GatewayStatus;
  authMode: AuthMode;
  presentationMode: PresentationMode;
  configVersion: number;
  keys: GatewayKeys;
}

export type GatewayEvent =
  | { type: 'CONFIGURE'; authMode?: AuthMode; presentationMode?: PresentationMode }
  | { type: 'BIND'; capabilityId: string }
  | { type: 'UNBIND'; capabilityId: string }
  | { type: 'SUSPEND' }
  | { type: 'RESUME' }
  | { type: 'RETIRE' }
  | { type: 'ROTATE_KEY'; kid: string; previousValidUntil: number }
  | { type: 'DROP_PREVIOUS_KEY' };

export type GatewayEmitted = { type: 'gateway.changed'; view: GatewayView } | { type: 'reply.binding'; changed: boolean };

export const gatewayAddressOf = (accountId: string, gatewayId: string) => `gateway/${accountId}/${gatewayId}`;
export const FIRST_KEY_ID = 'k1';

export function gatewayView(context: GatewayContext, status: GatewayStatus): GatewayView {
  return {
    id: context.gatewayId,
    accountId: context.accountId,
    handle: context.handle,
    status,
    authMode: context.authMode,
    presentationMode: context.presentationMode,
    configVersion: context.configVersion,
    keys: context.keys,
  };
}

const statusOf = (value: unknown): GatewayStatus => (value === 'suspended' ? 'suspended' : value === 'retired' ? 'retired' : 'active');

export const gatewayMachine = setup({
  types: { context: {} as GatewayContext, events: {} as GatewayEvent, input: {} as GatewayInput, emitted: {} as GatewayEmitted },
  guards: {
    changesConfig: ({ context, event }) =>
      event.type === 'CONFIGURE' && ((event.authMode !== undefined && event.authMode !== context.authMode) || (event.presentationMode !== undefined && event.presentationMode !== context.presentationMode)),
    unbound: ({ context, event }) => event.type === 'BIND' && !context.bindings.includes(event.capabilityId),
    bound: ({ context, event }) => event.type === 'UNBIND' && context.bindings.includes(event.capabilityId),
    newKey: ({ context, event }) => event.type === 'ROTATE_KEY' && event.kid !== context.keys.current && event.kid !== context.keys.previous?.kid,
  },
  actions: {
    configure: assign(({ context, event }) =>
      event.type === 'CONFIGURE'
        ? { authMode: event.authMode ?? context.authMode, presentationMode: event.presentationMode ?? context.presentationMode, configVersion: context.configVersion + 1 }
        : {},
    ),
    bind: assign(({ context, event }) => (event.type === 'BIND' ? { bindings: [...context.bindings, event.capabilityId], configVersion: context.configVersion + 1 } : {})),
    unbind: assign(({ context, event }) =>
      event.type === 'UNBIND' ? { bindings: context.bindings.filter((c) => c !== event.capabilityId), configVersion: context.configVersion + 1 } : {},
    ),
    rotate: assign(({ context, event }) =>
      event.type === 'ROTATE_KEY' ? { keys: { current: event.kid, previous: { kid: context.keys.current, dropAt: event.previousValidUntil } } } : {},
    ),
    dropPrevious: assign(({ context }) => ({ keys: { current: context.keys.current, previous: null } })),
    changed: emit(({ context, self }) => ({ type: 'gateway.changed' as const, view: gatewayView(context, statusOf(self.getSnapshot().value)) })),
    nowSuspended: emit(({ context }) => ({ type: 'gateway.changed' as const, view: gatewayView(context, 'suspended') })),
    nowActive: emit(({ context }) => ({ type: 'gateway.changed' as const, view: gatewayView(context, 'active') })),
    nowRetired: emit(({ context }) => ({ type: 'gateway.changed' as const, view: gatewayView(context, 'retired') })),
    replyChanged: emit({ type: 'reply.binding' as const, changed: true }),
    replyUnchanged: emit({ type: 'reply.binding' as const, changed: false }),
  },
}).createMachine({
  id: 'Gateway',
  context: ({ input }) => ({
    gatewayId: input.gatewayId,
    accountId: input.accountId,
    handle: input.handle,
    authMode: input.authMode,
    presentationMode: input.presentationMode,
    configVersion: 1,
    bindings: input.bindings ?? [],
    keys: { current: FIRST_KEY_ID, previous: null },
  }),
  initial: 'active',
  entry: 'nowActive',
  // Configuration may change whether the gateway serves or not; a retired gateway takes nothing.
  on: {
    CONFIGURE: { guard: 'changesConfig', actions: ['configure', 'changed'] },
    BIND: [{ guard: 'unbound', actions: ['bind', 'changed', 'replyChanged'] }, { actions: 'replyUnchanged' }],
    UNBIND: [{ guard: 'bound', actions: ['unbind', 'changed', 'replyChanged'] }, { actions: 'replyUnchanged' }],
    ROTATE_KEY: { guard: 'newKey', actions: ['rotate', 'changed'] },
    DROP_PREVIOUS_KEY: { actions: ['dropPrevious', 'changed'] },
    RETIRE: { target: '.retired', actions: 'nowRetired' },
  },
  states: {
    active: { on: { SUSPEND: { target: 'suspended', actions: 'nowSuspended' } } },
    suspended: { on: { RESUME: { target: 'active', actions: 'nowActive' } } },
    retired: { type: 'final' },
  },
});

/** While a previous key still verifies tokens, a durable timer drops it once they have all expired. */
export function gatewayTimers(snapshot: { status: string; context: GatewayContext }) {
  const previous = snapshot.context.keys.previous;
  return snapshot.status === 'active' && previous ? [{ key: 'drop-previous-key', at: previous.dropAt, event: { type: 'DROP_PREVIOUS_KEY' } }] : [];
}
