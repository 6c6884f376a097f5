import { createStore } from '@xstate/store';
import type { GatewayView } from '../../actors/index.ts';
import type { GatewayRecord, Store } from '../../store/index.ts';
import type { Bus } from '../core/bus/index.ts';
import { SUBJECTS } from '../core/subjects/index.ts';

/** How long a gateway read from the database is trusted without word from its actor (a missed event's bound). */
export const DIRECTORY_TTL_MS = 30_000;

interface Entry {
  view: GatewayView;
  at: number;
}

export const viewOfRecord = (g: GatewayRecord): GatewayView => ({
  id: g.id,
  accountId: g.accountId,
  handle: g.handle,
  status: g.status,
  authMode: g.authMode,
  presentationMode: g.presentationMode,
  configVersion: g.configVersion,
  keys: g.keys,
});

/**
 * Each node's copy of the gateways it serves, read on every MCP request without a turn of the Gateway actor: loaded
 * from the actor's projection on first use, then kept current by the actor's `gateway.changed` events (any node's
 * commit reaches every node), and reloaded after DIRECTORY_TTL_MS should an event be missed. An @xstate/store store:
 * its events (`loaded`, `changed`) are the only way in, and its snapshot can be inspected like an actor's.
 */
export function createGatewayDirectory(deps: { store: Pick<Store, 'gateways'>; bus?: Bus; now: () => number; ttlMs?: number; onChange?: (view: GatewayView) => void }) {
  const ttl = deps.ttlMs ?? DIRECTORY_TTL_MS;
  const directory = createStore({
    // Maps mutated in place (the store's context is replaced shallowly): an update costs the same with 10 or 100,000 gateways.
    context: { byId: new Map<string, Entry>(), idOfHandle: new Map<string, string>() },
    on: {
      loaded: (ctx, e: { view: GatewayView; at: number }) => {
        ctx.byId.set(e.view.id, { view: e.view, at: e.at });
        ctx.idOfHandle.set(e.view.handle, e.view.id);
        return { ...ctx };
      },
      changed: (ctx, e: { view: GatewayView; at: number }) => {
        const known = ctx.byId.get(e.view.id);
        // Events of one gateway arrive in order, but a reload may have read a newer row meanwhile.
        if (known && known.view.configVersion > e.view.configVersion && known.view.status === e.view.status) return ctx;
        ctx.byId.set(e.view.id, { view: e.view, at: e.at });
        ctx.idOfHandle.set(e.view.handle, e.view.id);
        return { ...ctx };
      },
    },
  });
  const unsubscribe = deps.bus?.subscribe(SUBJECTS.actorEventsOfKind('gateway'), (data) => {
    const event = (data as { event?: { type?: string; view?: GatewayView } }).event;
    if (event?.type !== 'gateway.changed' || !event.view) return;
    directory.send({ type: 'changed', view: event.view, at: deps.now() });
    deps.onChange?.(event.view);
  });
  const fresh = (e: Entry | undefined) => (e && deps.now() - e.at < ttl ? e.view : undefined);

  return {
    /** The gateway at a handle, as its actor last described it; null for no gateway. */
    async byHandle(handle: string): Promise<GatewayView | null> {
      const { byId, idOfHandle } = directory.getSnapshot().context;
      const id = idOfHandle.get(handle);
      const hit = fresh(id ? byId.get(id) : undefined);
      if (hit) return hit;
      const row = await deps.store.gateways.byHandle(handle);
      if (!row) return null;
      const view = viewOfRecord(row);
      directory.send({ type: 'loaded', view, at: deps.now() });
      return view;
    },
    /** Applies a view this node just committed (an operator command answered here), before its event arrives. */
    apply(view: GatewayView) {
      directory.send({ type: 'changed', view, at: deps.now() });
      deps.onChange?.(view);
    },
    inspect: () => directory.getSnapshot().context,
    close: () => unsubscribe?.(),
  };
}

export type GatewayDirectory = ReturnType<typeof createGatewayDirectory>;
