export { createTaskPool, type TaskPool, type TaskLimits, type TaskOptions } from './task-pool.ts';
