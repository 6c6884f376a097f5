// What the Browser's captures (capture-task.ts, in a worker) take and give: shared by the node and the worker
// without loading Chromium's driver on the node's thread.
import type { EgressOptions } from '../core/egress/index.ts';

export type CaptureKind = 'screenshot' | 'pdf' | 'snapshot';

export const CAPTURE_LIMITS = { requests: 200, bytes: 20 * 1024 * 1024, resourceBytes: 5 * 1024 * 1024, navigationMs: 15_000, maxHeight: 8_000, snapshotChars: 256 * 1024 } as const;

export interface CaptureInput {
  url: string;
  kind: CaptureKind;
  chromiumPath: string;
  egress: Pick<EgressOptions, 'allowLoopback' | 'ca'>;
  width: number;
  height: number;
  fullPage: boolean;
}

export interface CaptureResult {
  /** Why the page could not be captured (the tool error's message), else null. */
  error: string | null;
  title: string;
  bytes: Uint8Array | null;
  text: string | null;
  /** Requests the egress rules refused or that failed (at most 20 named). */
  blocked: string[];
  requests: number;
  javascript: boolean;
}
