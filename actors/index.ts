export * from './device-session.ts';
export * from './account.ts';
export * from './plugin-version.ts';

import { deviceSessionMachine } from './device-session.ts';
import { accountMachine } from './account.ts';
import { pluginVersionMachine } from './plugin-version.ts';

/** Every statechart of the platform by kind name (the first segment of an actor address). */
export const machines = {
  'device-session': deviceSessionMachine,
  account: accountMachine,
  'plugin-version': pluginVersionMachine,
} as const;

export type MachineKind = keyof typeof machines;
