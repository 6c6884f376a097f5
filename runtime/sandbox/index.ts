export { createSandbox, type Sandbox, type InvokeOutcome, type LoadedArtifacts } from './sandbox.ts';
export { toGuest, fromGuest, camel } from './values.ts';
