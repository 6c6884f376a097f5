import { assign, emit, setup } from 'xstate';
import type { TaskCaller } from './agent-task.ts';
import { effect } from './effects.ts';

/**
 * One build of a plugin from JavaScript source (componentize-js): it waits for its turn in the account's lane
 * (`prepare`), then is compiled into a component in a process of its own with time and memory limits (`compile`), packed and registered as
 * the plugin's next version, which then activates itself like any upload. Both steps are effects run in the account's
 * lane; a cancel while building aborts the compile (its process is killed).
 *
 * queued ──prepared──▶ building ──compiled and registered──▶ succeeded
 *    │                    └──compile or admission failed──▶ failed
 *    └──invalid source──▶ failed          queued | building ──CANCEL──▶ canceled
 */

export type PluginBuildStatus = 'queued' | 'building' | 'succeeded' | 'failed' | 'canceled';

export interface PluginBuildInput {
  accountId: string;
  buildId: string;
  /** The plugin's name: a new plugin, or the next version of the one of that name. */
  name: string;
  description: string;
  caller: TaskCaller;
  at: string;
}

export interface PrepareOutput {
  at: string;
}
export interface CompileOutput {
  capabilityId: string;
  version: number;
  logs: string;
  at: string;
}

export interface PluginBuildContext extends PluginBuildInput {
  status: PluginBuildStatus;
  capabilityId: string | null;
  version: number | null;
  logs: string;
  error: string | null;
  updatedAt: string;
}

export type PluginBuildEvent = { type: 'CANCEL'; at: string; by: string };
export type PluginBuildEmitted = { type: 'build.status'; status: PluginBuildStatus; at: string; error?: string };

export const pluginBuildAddressOf = (accountId: string, buildId: string) => `plugin-build/${accountId}/${buildId}`;

const outputOf = <T>(event: unknown) => (event as { output: T }).output;
const failureOf = (event: unknown) => (event as { error?: { code?: string; message?: string; at?: number } }).error ?? {};

export const pluginBuildMachine = setup({
  types: { context: {} as PluginBuildContext, events: {} as PluginBuildEvent, input: {} as PluginBuildInput, emitted: {} as PluginBuildEmitted },
  actors: { prepare: effect<{ accountId: string; buildId: string }, PrepareOutput>(), compile: effect<{ accountId: string; buildId: string; name: string; description: string; caller: TaskCaller }, CompileOutput>() },
  actions: {
    building: assign(({ event }) => ({ status: 'building' as const, updatedAt: outputOf<PrepareOutput>(event).at })),
    succeeded: assign(({ event }) => {
      const out = outputOf<CompileOutput>(event);
      return { status: 'succeeded' as const, capabilityId: out.capabilityId, version: out.version, logs: out.logs, updatedAt: out.at };
    }),
    failed: assign(({ context, event }) => {
      const err = failureOf(event);
      return { status: 'failed' as const, error: `${err.code ?? 'PLT_INTERNAL'}: ${err.message ?? 'the build failed'}`, updatedAt: typeof err.at === 'number' ? new Date(err.at).toISOString() : context.updatedAt };
    }),
    cancel: assign(({ event }) => ({ status: 'canceled' as const, error: `canceled by ${event.by}`, updatedAt: event.at })),
    announce: emit(({ context }) => ({ type: 'build.status' as const, status: context.status, at: context.updatedAt, ...(context.error ? { error: context.error } : {}) })),
  },
}).createMachine({
  id: 'PluginBuild',
  context: ({ input }) => ({ ...input, status: 'queued', capabilityId: null, version: null, logs: '', error: null, updatedAt: input.at }),
  initial: 'queued',
  states: {
    queued: {
      on: { CANCEL: { target: 'canceled', actions: ['cancel', 'announce'] } },
      invoke: {
        id: 'prepare',
        src: 'prepare',
        input: ({ context }) => ({ accountId: context.accountId, buildId: context.buildId }),
        onDone: { target: 'building', actions: ['building', 'announce'] },
        onError: { target: 'failed', actions: ['failed', 'announce'] },
      },
    },
    building: {
      on: { CANCEL: { target: 'canceled', actions: ['cancel', 'announce'] } },
      invoke: {
        id: 'compile',
        src: 'compile',
        input: ({ context }) => ({ accountId: context.accountId, buildId: context.buildId, name: context.name, description: context.description, caller: context.caller }),
        onDone: { target: 'succeeded', actions: ['succeeded', 'announce'] },
        onError: { target: 'failed', actions: ['failed', 'announce'] },
      },
    },
    succeeded: { type: 'final' },
    failed: { type: 'final' },
    canceled: { type: 'final' },
  },
});
