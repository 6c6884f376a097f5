/** Types of spin-for.mjs (plain JavaScript, shared with the sandbox threads). */
export declare function spinFor<T>(from: number, ms: number, probe: () => T | undefined): { found: T | undefined; at: number };
