import type { AnyStateMachine } from 'xstate';
import { accountMachine, accountTimers } from './account.ts';
import { deviceSessionMachine, deviceSessionTimers } from './device-session.ts';
import { pluginVersionMachine } from './plugin-version.ts';
import { gatewayMachine, gatewayTimers } from './gateway.ts';
import { agentTaskMachine } from './agent-task.ts';
import { approvalGateMachine, approvalGateTimers } from './approval-gate.ts';
import { workflowRunMachine, workflowRunTimers } from './workflow-run.ts';
import { pluginBuildMachine } from './plugin-build.ts';
import { scheduleMachine, scheduleTimers } from './schedule.ts';

export * from './effects.ts';
export * from './device-session.ts';
export * from './account.ts';
export * from './plugin-version.ts';
export * from './gateway.ts';
export * from './agent-task.ts';
export * from './approval-gate.ts';
export * from './workflow-run.ts';
export * from './workflow-logic.ts';
export * from './plugin-build.ts';
export * from './schedule.ts';

export interface KindSpec {
  machine: AnyStateMachine;
  /** The durable timers a state needs (XState does not persist `after`). */
  timers?: (state: { status: string; value: unknown; context: any }) => { key: string; at: number; event: { type: string } & Record<string, unknown> }[];
  /** The effects the machine starts (named in its setup); the runtime provides their implementations. */
  effects: readonly string[];
}

/**
 * Every kind of actor of the platform, by the name that is the first segment of its address: its statechart, its
 * durable timers and the effects it starts. The runtime hosts these kinds, the statechart viewer draws them.
 */
export const KINDS = {
  'device-session': { machine: deviceSessionMachine, timers: deviceSessionTimers, effects: [] },
  account: { machine: accountMachine, timers: accountTimers, effects: [] },
  'plugin-version': { machine: pluginVersionMachine, effects: ['activate'] },
  gateway: { machine: gatewayMachine, timers: gatewayTimers, effects: [] },
  'agent-task': { machine: agentTaskMachine, effects: ['modelTurn', 'callTools'] },
  'approval-gate': { machine: approvalGateMachine, timers: approvalGateTimers, effects: [] },
  'workflow-run': { machine: workflowRunMachine, timers: workflowRunTimers, effects: ['runTool', 'openGate', 'runEnded'] },
  'plugin-build': { machine: pluginBuildMachine, effects: ['prepare', 'compile'] },
  schedule: { machine: scheduleMachine, timers: scheduleTimers, effects: ['startRun'] },
} as const satisfies Record<string, KindSpec>;

export type KindName = keyof typeof KINDS;

/** Every statechart by kind name. */
export const machines: Record<KindName, AnyStateMachine> = Object.fromEntries(Object.entries(KINDS).map(([k, v]) => [k, v.machine])) as Record<KindName, AnyStateMachine>;
