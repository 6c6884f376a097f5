import { describe, expect, it } from 'vitest';
import { KINDS, pluginVersionMachine, TELL, type PluginVersionEvent } from '../../actors/index.ts';
import { effectDone, effectFailed, walk as walkMachine } from '../helpers/statechart.ts';

const input = { accountId: 'a', capabilityId: 'c', version: 2, wasmHash: 'h' };
const activate: PluginVersionEvent = { type: 'ACTIVATE', by: 'u1' };

const walk = (...events: PluginVersionEvent[]) => walkMachine(pluginVersionMachine, input, ...events);

describe('PluginVersion statechart', () => {
  it('[PLUGIN-01] is created dormant', () => {
    expect(walk().value).toBe('dormant');
  });

  it('starts its activation as an effect of `activating`, with what the effect needs as input', () => {
    const s = walk(activate);
    expect(s.value).toBe('activating');
    const child = JSON.parse(JSON.stringify(s.children)).activate;
    expect(Object.keys(s.children)).toEqual(['activate']);
    expect(child).toBeDefined();
    expect(s.emitted).toEqual([{ type: 'version.activating', version: 2 }]);
    expect(KINDS['plugin-version'].effects).toEqual(Object.keys(pluginVersionMachine.implementations.actors));
  });

  it('activates, records its artifacts, and tells the version it replaced that it is superseded', () => {
    const s = walk(activate, effectDone('activate', { artifactHash: 'm1', previous: 1, serving: true }));
    expect(s.value).toBe('active');
    expect(s.context.artifactHash).toBe('m1');
    expect(s.emitted).toEqual([
      { type: 'version.activated', version: 2, artifactHash: 'm1' },
      { type: TELL, to: 'plugin-version/a/c:1', event: { type: 'SUPERSEDED' } },
    ]);
    // The first version replaces nothing, and a re-run of this version's own activation tells nobody.
    expect(walk(activate, effectDone('activate', { artifactHash: 'm1', previous: 0, serving: true })).emitted).toEqual([{ type: 'version.activated', version: 2, artifactHash: 'm1' }]);
    expect(walk(activate, effectDone('activate', { artifactHash: 'm1', previous: 2, serving: true })).emitted.map((e) => e.type)).toEqual(['version.activated']);
    const superseded = walk(activate, effectDone('activate', { artifactHash: 'm1', previous: 0, serving: true }), { type: 'SUPERSEDED' });
    expect(superseded.value).toBe('superseded');
    expect(walk(activate, effectDone('activate', { artifactHash: 'm1', previous: 0, serving: true }), { type: 'SUPERSEDED' }, activate).value).toBe('activating');
  });

  it('an upload activation that lands after a later version serves leaves this one superseded; a rollback serves', () => {
    const late = walk(activate, effectDone('activate', { artifactHash: 'm1', previous: 3, serving: false }));
    expect(late.value).toBe('superseded');
    expect(late.emitted).toEqual([{ type: 'version.superseded', version: 2 }]);
    const rollback = walk({ type: 'ACTIVATE', by: 'u1', rollback: true });
    expect(rollback.context.rollback).toBe(true);
    expect(JSON.parse(JSON.stringify(rollback.children)).activate).toBeDefined();
    expect(walk(activate).context.rollback).toBe(false);
  });

  it('[PLUGIN-03] a failed activation goes back to dormant with the reason', () => {
    const s = walk(activate, effectFailed('activate', { code: 'ACTIVATION_FAILED', message: 'transpile failed' }));
    expect(s.value).toBe('dormant');
    expect(s.context.lastError).toBe('transpile failed');
    expect(s.emitted).toEqual([{ type: 'version.activation_failed', version: 2, reason: 'transpile failed' }]);
    expect(walk(activate, effectFailed('activate', { code: 'ACTIVATION_FAILED', message: 'x' }), activate).context.lastError).toBeNull();
  });

  it('ignores events that do not apply to the state; a second ACTIVATE joins the activation in progress', () => {
    expect(walk({ type: 'SUPERSEDED' }).value).toBe('dormant');
    const twice = walk(activate, activate);
    expect(twice.value).toBe('activating');
    expect(twice.emitted).toEqual([]);
    expect(walk(activate, effectDone('activate', { artifactHash: 'm', previous: 0, serving: true }), activate).value).toBe('active');
  });
});
