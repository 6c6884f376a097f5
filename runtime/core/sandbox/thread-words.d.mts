/** Types of thread-words.mjs (plain JavaScript, shared with the sandbox threads). */
export declare const REQUESTS: 0;
export declare const REPLIES: 1;
export declare const AWAKE: 2;
export declare const SPINS: 3;
export declare const THREAD_WORDS: 4;
export declare const SPINNER: 0;
export declare const MAY_SPIN: 1;
export declare const SHARED_WORDS: 2;
