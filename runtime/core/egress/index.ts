/**
 * Egress: the one module through which the platform reaches out on a tenant's behalf. Loopback, private,
 * link-local, metadata and reserved addresses are refused (IPv4 inside IPv6 judged by its IPv4 address), both for
 * literal addresses and for the addresses a name resolves to at connect time, so DNS rebinding cannot slip past.
 */
// Plain JavaScript shared with worker threads, typed by its declaration (index.d.mts).
export { addressClass, isForbiddenAddress, isForbiddenName, EGRESS_GUARD_URL, type AddressClass } from './index.mjs';
export { egressStreamingFetch } from './egress-stream.ts';
export { checkEgressUrl, egressFetch, isLoopbackAddress, loadUndici, EGRESS_MAX_BYTES, EGRESS_TIMEOUT_MS, type EgressOptions, type EgressResolver, type EgressResponse } from './egress-fetch.ts';
