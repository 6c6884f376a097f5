import { mkdirSync, readdirSync } from 'node:fs';
import path from 'node:path';

/**
 * `--profile`: the processes of our side start with `--cpu-prof` (every thread, workers included, writes its own
 * `.cpuprofile` when the process exits), into a directory beside the run's results, one subdirectory per process.
 * References are not profiled: their cost is theirs, and a profiler's overhead on one side only would skew the ratio
 * the other way.
 */
let dir: string | undefined;

export function profileInto(d: string): void {
  dir = d;
}

/** The Node flags that profile process `name` of our side, or none when this run does not profile. */
export function profileFlags(name: string): string[] {
  if (!dir) return [];
  const into = path.join(dir, name.replace(/[^a-z0-9-]+/gi, '-').replace(/^-|-$/g, ''));
  mkdirSync(into, { recursive: true });
  return ['--cpu-prof', `--cpu-prof-dir=${into}`];
}

/** The profiles written so far, relative paths under the directory, for the report. */
export function profilesWritten(): { dir: string; files: string[] } | undefined {
  if (!dir) return undefined;
  const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.cpuprofile')).sort();
  return { dir, files };
}
