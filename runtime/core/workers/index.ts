export { createTaskPool, type TaskPool, type TaskLimits, type TaskOptions } from './task-pool.ts';
export { joinInSlices, SLICE_BYTES } from './slices.ts';
