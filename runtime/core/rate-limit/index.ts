export * from './counter.ts';
export * from './limiter.ts';
