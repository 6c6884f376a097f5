export { createLaneScheduler, type LaneOptions, type LaneScheduler, type LaneStats } from './lane-scheduler.ts';
