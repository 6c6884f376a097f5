export { createSandbox, sandboxSizing, type Sandbox, type InvokeOutcome, type LoadedArtifacts, type SandboxGrants, type KeyValueHandler, type CallOutput } from './sandbox.ts';
export { toGuest, fromGuest, camel } from './values.ts';
export { createSandboxThreads, type SandboxThreads } from './threads.ts';
export { CallSignal } from './watchdog.ts';
