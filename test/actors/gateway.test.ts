import { describe, expect, it } from 'vitest';
import { gatewayMachine, gatewayTimers, KINDS, type GatewayEvent } from '../../actors/index.ts';
import { walk as walkMachine } from '../helpers/statechart.ts';

const input = { gatewayId: 'g1', accountId: 'a1', handle: 'shop', authMode: 'private' as const, presentationMode: 'adaptive' as const };
const walk = (...events: GatewayEvent[]) => walkMachine(gatewayMachine, input, ...events);

describe('Gateway statechart', () => {
  it('starts active at configuration version 1 with its first key, and announces its view', () => {
    const s = walk();
    expect(s.value).toBe('active');
    expect(s.context).toMatchObject({ configVersion: 1, bindings: [], keys: { current: 'k1', previous: null } });
    expect(s.emitted).toEqual([{ type: 'gateway.changed', view: { id: 'g1', accountId: 'a1', handle: 'shop', status: 'active', authMode: 'private', presentationMode: 'adaptive', configVersion: 1, keys: { current: 'k1', previous: null } } }]);
    expect(KINDS.gateway.machine).toBe(gatewayMachine);
  });

  it('active ⇄ suspended, each change journaled with the new status', () => {
    const s = walk({ type: 'SUSPEND' });
    expect(s.value).toBe('suspended');
    expect(s.emitted[0]).toMatchObject({ type: 'gateway.changed', view: { status: 'suspended' } });
    const r = walk({ type: 'SUSPEND' }, { type: 'RESUME' });
    expect(r.value).toBe('active');
    expect(r.emitted[0]).toMatchObject({ type: 'gateway.changed', view: { status: 'active' } });
    expect(walk({ type: 'RESUME' }).emitted).toEqual([]);
  });

  it('retires for good, from active or suspended', () => {
    for (const s of [walk({ type: 'RETIRE' }), walk({ type: 'SUSPEND' }, { type: 'RETIRE' })]) {
      expect(s.value).toBe('retired');
      expect(s.status).toBe('done');
      expect(s.emitted[0]).toMatchObject({ type: 'gateway.changed', view: { status: 'retired' } });
    }
  });

  it('configuration changes bump the version; the same configuration again changes nothing', () => {
    const s = walk({ type: 'CONFIGURE', authMode: 'public' }, { type: 'CONFIGURE', presentationMode: 'unified' });
    expect(s.context).toMatchObject({ authMode: 'public', presentationMode: 'unified', configVersion: 3 });
    expect(s.emitted[0]).toMatchObject({ view: { presentationMode: 'unified', configVersion: 3 } });
    const same = walk({ type: 'CONFIGURE', authMode: 'private' });
    expect(same.context.configVersion).toBe(1);
    expect(same.emitted).toEqual([]);
    // A suspended gateway is configured too (it still is one).
    expect(walk({ type: 'SUSPEND' }, { type: 'CONFIGURE', authMode: 'public' }).context.configVersion).toBe(2);
  });

  it('binds and unbinds capabilities, answering whether anything changed', () => {
    const bound = walk({ type: 'BIND', capabilityId: 'c1' });
    expect(bound.context).toMatchObject({ bindings: ['c1'], configVersion: 2 });
    expect(bound.emitted.map((e) => e.type)).toEqual(['gateway.changed', 'reply.binding']);
    expect(bound.emitted[1]).toEqual({ type: 'reply.binding', changed: true });
    expect(walk({ type: 'BIND', capabilityId: 'c1' }, { type: 'BIND', capabilityId: 'c1' }).emitted).toEqual([{ type: 'reply.binding', changed: false }]);
    const unbound = walk({ type: 'BIND', capabilityId: 'c1' }, { type: 'UNBIND', capabilityId: 'c1' });
    expect(unbound.context).toMatchObject({ bindings: [], configVersion: 3 });
    expect(walk({ type: 'UNBIND', capabilityId: 'c9' }).emitted).toEqual([{ type: 'reply.binding', changed: false }]);
  });

  it('rotates its key: the previous one verifies until a durable timer drops it', () => {
    const rotated = walk({ type: 'ROTATE_KEY', kid: 'k2', previousValidUntil: 5_000 });
    expect(rotated.context.keys).toEqual({ current: 'k2', previous: { kid: 'k1', dropAt: 5_000 } });
    expect(gatewayTimers(rotated)).toEqual([{ key: 'drop-previous-key', at: 5_000, event: { type: 'DROP_PREVIOUS_KEY' } }]);
    const dropped = walk({ type: 'ROTATE_KEY', kid: 'k2', previousValidUntil: 5_000 }, { type: 'DROP_PREVIOUS_KEY' });
    expect(dropped.context.keys).toEqual({ current: 'k2', previous: null });
    expect(gatewayTimers(dropped)).toEqual([]);
    // The same key id twice rotates nothing.
    expect(walk({ type: 'ROTATE_KEY', kid: 'k1', previousValidUntil: 5_000 }).context.keys).toEqual({ current: 'k1', previous: null });
    expect(gatewayTimers(walk({ type: 'ROTATE_KEY', kid: 'k2', previousValidUntil: 5_000 }, { type: 'RETIRE' }))).toEqual([]);
  });
});
