export * from './device-session.ts';
export * from './account.ts';

import { deviceSessionMachine } from './device-session.ts';
import { accountMachine } from './account.ts';

/** Every statechart of the platform by kind name (the first segment of an actor address). */
export const machines = {
  'device-session': deviceSessionMachine,
  account: accountMachine,
} as const;

export type MachineKind = keyof typeof machines;
