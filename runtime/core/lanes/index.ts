export { createLaneScheduler, type LaneOptions, type LaneScheduler, type LaneStats, type LaneLoad } from './lane-scheduler.ts';
