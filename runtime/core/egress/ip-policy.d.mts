/** Types of ip-policy.mjs (plain JavaScript, shared with the sandbox worker). */
/** Why an address may not be reached; `translator`: NAT64 or Teredo, whose far end cannot be judged; `invalid`: no address. */
export type AddressClass = 'metadata' | 'loopback' | 'private' | 'link-local' | 'shared' | 'unspecified' | 'multicast' | 'reserved' | 'translator' | 'invalid';
/** The class of an address literal that may not be reached (IPv4 inside IPv6 judged by the IPv4), or null when it is public. */
export declare function addressClass(address: string): AddressClass | null;
export declare function isForbiddenAddress(address: string): boolean;
export declare function isForbiddenName(host: string): boolean;
