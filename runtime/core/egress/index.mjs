// The egress module's entry for code that worker threads load without the TypeScript loader (the sandbox worker).
// Every outbound request the platform makes on a tenant's behalf is judged by these rules.
export { addressClass, isForbiddenAddress, isForbiddenName } from './ip-policy.mjs';

/** The preview2-shim IO-worker extension that checks every address wasi:http connects to (see egress-guard.mjs). */
export const EGRESS_GUARD_URL = new URL('./egress-guard.mjs', import.meta.url);
