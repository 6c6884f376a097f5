import { describe, expect, it } from 'vitest';
import { pluginVersionMachine, type PluginVersionEvent } from '../../actors/index.ts';
import { walk as walkMachine } from '../helpers/statechart.ts';

const input = { accountId: 'a', capabilityId: 'c', version: 2, wasmHash: 'h' };

const walk = (...events: PluginVersionEvent[]) => walkMachine(pluginVersionMachine, input, ...events);

describe('PluginVersion statechart', () => {
  it('[PLUGIN-01] is created dormant', () => {
    expect(walk().value).toBe('dormant');
  });

  it('activates, records its artifact hashes, and is superseded by a later activation', () => {
    const s = walk({ type: 'ACTIVATE' }, { type: 'ACTIVATED', artifactHashes: ['x', 'y'] });
    expect(s.value).toBe('active');
    expect(s.context.artifactHashes).toEqual(['x', 'y']);
    expect(walk({ type: 'ACTIVATE' }, { type: 'ACTIVATED', artifactHashes: [] }, { type: 'SUPERSEDED' }).value).toBe('superseded');
    expect(walk({ type: 'ACTIVATE' }, { type: 'ACTIVATED', artifactHashes: [] }, { type: 'SUPERSEDED' }, { type: 'ACTIVATE' }).value).toBe('activating');
  });

  it('a failed activation goes back to dormant with the reason', () => {
    const s = walk({ type: 'ACTIVATE' }, { type: 'ACTIVATION_FAILED', reason: 'transpile failed' });
    expect(s.value).toBe('dormant');
    expect(s.context.lastError).toBe('transpile failed');
  });

  it('ignores events that do not apply to the state', () => {
    expect(walk({ type: 'ACTIVATED', artifactHashes: ['x'] }).value).toBe('dormant');
    expect(walk({ type: 'SUPERSEDED' }).value).toBe('dormant');
    expect(walk({ type: 'ACTIVATE' }, { type: 'ACTIVATE' }).value).toBe('activating');
  });
});
