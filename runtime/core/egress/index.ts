/**
 * Egress: the one module through which the platform reaches out on a tenant's behalf. Loopback, private,
 * link-local, metadata and reserved addresses are refused (IPv4 inside IPv6 judged by its IPv4 address), both for
 * literal addresses and for the addresses a name resolves to at connect time, so DNS rebinding cannot slip past.
 */
// @ts-expect-error plain JavaScript shared with worker threads (no declaration file)
import * as policy from './index.mjs';

/** Why an address may not be reached; `translator`: NAT64 or Teredo, whose far end cannot be judged; `invalid`: no address. */
export type AddressClass = 'metadata' | 'loopback' | 'private' | 'link-local' | 'shared' | 'unspecified' | 'multicast' | 'reserved' | 'translator' | 'invalid';
/** The class of an address literal that may not be reached (IPv4 inside IPv6 judged by the IPv4), or null when it is public. */
export const addressClass: (address: string) => AddressClass | null = policy.addressClass;
export const isForbiddenAddress: (address: string) => boolean = policy.isForbiddenAddress;
export const isForbiddenName: (host: string) => boolean = policy.isForbiddenName;
export const EGRESS_GUARD_URL: URL = policy.EGRESS_GUARD_URL;
export { egressStreamingFetch } from './egress-stream.ts';
export { checkEgressUrl, egressFetch, isLoopbackAddress, loadUndici, EGRESS_MAX_BYTES, EGRESS_TIMEOUT_MS, type EgressOptions, type EgressResolver, type EgressResponse } from './egress-fetch.ts';
