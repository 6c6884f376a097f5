import { assign, emit, setup } from 'xstate';
import { effect, tell } from './effects.ts';

/**
 * One uploaded version of a plugin. An upload registers it dormant and sends ACTIVATE: the activation (transpile,
 * store artifacts by hash, record them and flip the capability's active version in one transaction) is the effect of
 * `activating`, so it survives a crash or a shard move (the runtime starts it again with the same key) and runs once
 * however many ACTIVATEs arrive meanwhile. A failure leaves the version dormant with the reason; the version that was
 * active keeps serving. The version it replaced is told SUPERSEDED. An upload's activation serves only if no later
 * version serves by the time it lands (a slow transpile does not undo a newer upload); a rollback always serves.
 *
 * dormant ──ACTIVATE──▶ activating ──(activate done)──▶ active ──SUPERSEDED──▶ superseded ──ACTIVATE──▶ activating
 *                          └──(activate failed)──▶ dormant (reason kept)
 */
export interface PluginVersionInput {
  accountId: string;
  capabilityId: string;
  version: number;
  wasmHash: string;
}

export interface PluginVersionContext extends PluginVersionInput {
  artifactHash: string | null;
  lastError: string | null;
  /** Who asked for the activation in progress or last done. */
  activatedBy: string | null;
  /** The activation in progress rolls back to this version: it serves even if a later version serves now. */
  rollback: boolean;
}

export type PluginVersionEvent = { type: 'ACTIVATE'; by: string; rollback?: boolean } | { type: 'SUPERSEDED' };

export interface ActivateInput {
  accountId: string;
  capabilityId: string;
  version: number;
  by: string;
  /** Serve even if a later version serves now (a rollback); else serve only if this version is the latest to serve. */
  rollback: boolean;
}

export interface ActivateOutput {
  artifactHash: string;
  /** The version that served before (0: none, or this one). */
  previous: number;
  /** Whether this version serves now (false: a later version already served when this activation landed). */
  serving: boolean;
}

export type PluginVersionEmitted =
  | { type: 'version.activating'; version: number }
  | { type: 'version.activated'; version: number; artifactHash: string }
  | { type: 'version.activation_failed'; version: number; reason: string }
  | { type: 'version.superseded'; version: number };

export const pluginVersionAddressOf = (accountId: string, capabilityId: string, version: number) => `plugin-version/${accountId}/${capabilityId}:${version}`;

export const pluginVersionMachine = setup({
  types: { context: {} as PluginVersionContext, events: {} as PluginVersionEvent, input: {} as PluginVersionInput, emitted: {} as PluginVersionEmitted },
  actors: { activate: effect<ActivateInput, ActivateOutput>() },
  actions: {
    requested: assign({ activatedBy: ({ event }) => (event.type === 'ACTIVATE' ? event.by : null), rollback: ({ event }) => event.type === 'ACTIVATE' && event.rollback === true, lastError: null }),
    announceActivating: emit(({ context }) => ({ type: 'version.activating' as const, version: context.version })),
    recordArtifacts: assign({ artifactHash: ({ event }) => (event as unknown as { output: ActivateOutput }).output.artifactHash }),
    announceActivated: emit(({ context }) => ({ type: 'version.activated' as const, version: context.version, artifactHash: context.artifactHash ?? '' })),
    supersedePrevious: tell(
      ({ context, event }) => pluginVersionAddressOf(context.accountId, context.capabilityId, (event as { output: ActivateOutput }).output.previous),
      () => ({ type: 'SUPERSEDED' }),
    ),
    recordFailure: assign({ lastError: ({ event }) => String((event as unknown as { error?: { message?: unknown } }).error?.message ?? 'activation failed') }),
    announceFailure: emit(({ context }) => ({ type: 'version.activation_failed' as const, version: context.version, reason: context.lastError ?? '' })),
    announceSuperseded: emit(({ context }) => ({ type: 'version.superseded' as const, version: context.version })),
  },
}).createMachine({
  id: 'PluginVersion',
  context: ({ input }) => ({ ...input, artifactHash: null, lastError: null, activatedBy: null, rollback: false }),
  initial: 'dormant',
  states: {
    dormant: { on: { ACTIVATE: { target: 'activating', actions: 'requested' } } },
    activating: {
      entry: 'announceActivating',
      invoke: {
        id: 'activate',
        src: 'activate',
        input: ({ context }) => ({ accountId: context.accountId, capabilityId: context.capabilityId, version: context.version, by: context.activatedBy ?? '', rollback: context.rollback }),
        onDone: [
          { guard: ({ event }) => !event.output.serving, target: 'superseded', actions: ['recordArtifacts', 'announceSuperseded'] },
          { guard: ({ context, event }) => event.output.previous > 0 && event.output.previous !== context.version, target: 'active', actions: ['recordArtifacts', 'announceActivated', 'supersedePrevious'] },
          { target: 'active', actions: ['recordArtifacts', 'announceActivated'] },
        ],
        onError: { target: 'dormant', actions: ['recordFailure', 'announceFailure'] },
      },
    },
    active: { on: { SUPERSEDED: { target: 'superseded', actions: 'announceSuperseded' } } },
    superseded: { on: { ACTIVATE: { target: 'activating', actions: 'requested' } } },
  },
});
