export { createSpinPolicy, type SpinPolicy } from './spin-policy.ts';
export { createHotLoop, NEXT_REQUEST_US, NO_POLLING, type HotLoop, type PollBudget } from './hot-loop.ts';
