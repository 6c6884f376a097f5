import { assign, setup } from 'xstate';

/**
 * One uploaded version of a plugin. An upload registers it dormant; activation (transpile, store artifacts by
 * hash, flip the capability's active version in one transaction) runs as an effect of `activating`:
 *
 * dormant ──ACTIVATE──▶ activating ──ACTIVATED──▶ active ──SUPERSEDED──▶ superseded ──ACTIVATE──▶ activating
 *                          └──ACTIVATION_FAILED──▶ dormant (the previously active version keeps serving)
 */
export interface PluginVersionInput {
  accountId: string;
  capabilityId: string;
  version: number;
  wasmHash: string;
}

export interface PluginVersionContext extends PluginVersionInput {
  artifactHashes: string[];
  lastError: string | null;
}

export type PluginVersionEvent =
  | { type: 'ACTIVATE' }
  | { type: 'ACTIVATED'; artifactHashes: string[] }
  | { type: 'ACTIVATION_FAILED'; reason: string }
  | { type: 'SUPERSEDED' };

export const pluginVersionMachine = setup({
  types: { context: {} as PluginVersionContext, events: {} as PluginVersionEvent, input: {} as PluginVersionInput },
  actions: {
    recordArtifacts: assign({
      artifactHashes: ({ event }) => (event.type === 'ACTIVATED' ? event.artifactHashes : []),
      lastError: null,
    }),
    recordFailure: assign({ lastError: ({ event }) => (event.type === 'ACTIVATION_FAILED' ? event.reason : null) }),
  },
}).createMachine({
  id: 'PluginVersion',
  context: ({ input }) => ({ ...input, artifactHashes: [], lastError: null }),
  initial: 'dormant',
  states: {
    dormant: { on: { ACTIVATE: 'activating' } },
    activating: {
      on: {
        ACTIVATED: { target: 'active', actions: 'recordArtifacts' },
        ACTIVATION_FAILED: { target: 'dormant', actions: 'recordFailure' },
      },
    },
    active: { on: { SUPERSEDED: 'superseded' } },
    superseded: { on: { ACTIVATE: 'activating' } },
  },
});
