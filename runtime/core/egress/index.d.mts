/** Types of index.mjs: the egress rules that worker threads load as plain JavaScript. */
export { addressClass, isForbiddenAddress, isForbiddenName, type AddressClass } from './ip-policy.mjs';
/** The preview2-shim IO-worker extension that checks every address wasi:http connects to (see egress-guard.mjs). */
export declare const EGRESS_GUARD_URL: URL;
