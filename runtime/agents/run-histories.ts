import type { ThreadRecord, ThreadRecordInput } from '../../store/index.ts';
import { ttlCache } from '../core/cache/index.ts';
import { HISTORY_WINDOW } from './thread-history.ts';

/** A run's history kept at most this long (a run waiting on a human reads the store again when it resumes). */
const KEEP_MS = 5 * 60_000;
/** Runs kept per node; the oldest goes first. */
const MAX_RUNS = 1000;
/** A history larger than this (JSON characters) is not kept: the store serves it. */
const MAX_BYTES = 256 * 1024;

interface Held {
  records: ThreadRecord[];
  bytes: number;
}

const sizeOf = (r: ThreadRecordInput) => JSON.stringify(r.body)?.length ?? 0;
const asRecord = (r: ThreadRecordInput): ThreadRecord => ({ ...r, seq: 0, createdAt: '' });

/**
 * What each run on this node has read of its thread and written to it since, by task: the history its next model turn
 * sends, without reading the thread again (a tool-calling run's second turn would otherwise read back what its first
 * turn and its tool round just wrote). A run sees its thread as it was when the run started, plus its own steps; a
 * run that moved to another node, was started again, or outgrew the bounds reads the store instead.
 */
export function runHistories(now: () => number) {
  const held = ttlCache<string, Held>(KEEP_MS, now, MAX_RUNS);
  return {
    /** The run's history as its first turn read it (the stored tail and the user's message), with that turn's record. */
    start(taskId: string, history: readonly ThreadRecord[], record: ThreadRecordInput): void {
      let bytes = sizeOf(record);
      for (const r of history) bytes += sizeOf(r);
      if (bytes > MAX_BYTES) return;
      held.set(taskId, { records: [...history, asRecord(record)].slice(-HISTORY_WINDOW), bytes });
    },
    /** A record the run wrote after its first turn; a run not held stays so. */
    append(taskId: string, record: ThreadRecordInput): void {
      const h = held.get(taskId);
      if (!h) return;
      const bytes = h.bytes + sizeOf(record);
      if (bytes > MAX_BYTES) {
        held.delete(taskId);
        return;
      }
      h.records.push(asRecord(record));
      if (h.records.length > HISTORY_WINDOW) h.records.shift();
      h.bytes = bytes;
    },
    /** The run's history, or undefined: read the store. */
    get: (taskId: string): readonly ThreadRecord[] | undefined => held.get(taskId)?.records,
    /** The run answered (or ended): nothing reads its history any more. */
    end: (taskId: string): void => void held.delete(taskId),
  };
}

export type RunHistories = ReturnType<typeof runHistories>;
