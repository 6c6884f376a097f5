import { randomBytes } from 'node:crypto';
import type { GatewayContext } from '../../actors/index.ts';
import type { Projection } from '../core/actor-host/index.ts';

const statusOf = (value: unknown) => (value === 'suspended' ? 'suspended' : 'active');

/**
 * The Gateway projection, in the turn's own transaction: the row every node reads (status, modes, config version),
 * the tool bindings, and the signing keys (a key id the actor names gets its secret here, so secrets never sit in a
 * snapshot or an event; a dropped key's secret is deleted).
 */
export const gatewayProjection: Projection = async (tx, change) => {
  const now = change.state?.context as unknown as GatewayContext | undefined;
  const before = change.previous?.context as unknown as GatewayContext | undefined;
  const c = now ?? before;
  if (!c) return;
  await tx.gateways.project({
    id: c.gatewayId,
    accountId: c.accountId,
    status: now ? statusOf(change.state!.value) : 'retired',
    authMode: c.authMode,
    presentationMode: c.presentationMode,
    configVersion: c.configVersion,
    keys: c.keys,
  });
  if (!now) return;
  const target = { kind: 'gateway' as const, id: c.gatewayId };
  const had = new Set(before?.bindings ?? []);
  for (const id of now.bindings) if (!had.has(id)) await tx.bindings.bind(c.accountId, target, id, 'operator');
  for (const id of had) if (!now.bindings.includes(id)) await tx.bindings.unbind(c.accountId, target, id);
  if (now.keys.current !== before?.keys.current) await tx.gatewayKeys.getOrCreate(c.gatewayId, now.keys.current, randomBytes(32).toString('base64url'));
  const dropped = before?.keys.previous?.kid;
  if (dropped && now.keys.previous?.kid !== dropped && now.keys.current !== dropped) await tx.gatewayKeys.remove(c.gatewayId, dropped);
};
