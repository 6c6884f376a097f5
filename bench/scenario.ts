import type { Figure } from './figures.ts';
import type { Row } from './report.ts';
import type { RunOptions } from './runner.ts';

export interface ScenarioOptions extends RunOptions {
  /** Calls in flight during a phase (a closed loop of this many callers). */
  concurrency: number;
}

export interface ScenarioResult {
  title: string;
  parameters: Record<string, string | number>;
  rows: Row[];
  /** Measured quantities that are not calls (start times, memory): see figures.ts. */
  figures?: Figure[];
  notes: string[];
}

export interface Scenario {
  name: string;
  /** One line for the list of scenarios. */
  summary: string;
  /** Environment variables without which it cannot run. */
  needs: string[];
  defaultConcurrency: number;
  run(opts: ScenarioOptions): Promise<ScenarioResult>;
}

/** The parameters every report shows, so two reports can be told apart at a glance. */
export const runParameters = (o: ScenarioOptions): Record<string, string | number> => ({
  'measured s/phase': o.seconds,
  'warm-up s': o.warmupSeconds,
  rounds: o.rounds,
  'in flight': o.concurrency,
});
