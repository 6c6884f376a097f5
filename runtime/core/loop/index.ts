export { createSpinPolicy, type SpinPolicy } from './spin-policy.ts';
export { createHotLoop, NEXT_REQUEST_US, type HotLoop, type PollBudget } from './hot-loop.ts';
