// What worker threads load as plain JavaScript (no TypeScript loader there).
export { runInBackground, BACKGROUND_NICE } from './thread-priority.mjs';
