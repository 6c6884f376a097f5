import { parseArgs } from 'node:util';
import type { ScenarioOptions } from './scenario.ts';

export interface ScenarioInfo {
  name: string;
  summary: string;
  needs: string[];
  defaultConcurrency: number;
}

export type Parsed = { ok: true; scenario: string; options: ScenarioOptions; profile: boolean } | { ok: false; message: string };

export function usage(scenarios: readonly ScenarioInfo[]): string {
  const width = Math.max(...scenarios.map((s) => s.name.length));
  return [
    'usage: npm run bench -- <scenario> [--seconds 5] [--warmup 1] [--rounds 3] [--concurrency n] [--profile]',
    '',
    '  --seconds      measured seconds per phase (default 5)',
    '  --warmup       warm-up seconds before each phase, not measured (default 1)',
    '  --rounds       run the phases in turn this many times; each figure is the median of the rounds (default 3)',
    "  --concurrency  calls in flight (default: the scenario's)",
    '  --profile      start our side\'s processes with --cpu-prof; the profiles go beside the results',
    '',
    'scenarios:',
    ...scenarios.map((s) => `  ${s.name.padEnd(width)}  ${s.summary}${s.needs.length ? ` (needs ${s.needs.join(', ')})` : ''}`),
    '',
    'Results go to bench/results/<scenario>-<timestamp>.{json,md,svg}.',
  ].join('\n');
}

function number(name: string, raw: string | undefined, fallback: number, check: (n: number) => boolean, rule: string): number | string {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  return raw.trim() !== '' && Number.isFinite(n) && check(n) ? n : `--${name} takes ${rule}, not "${raw}"`;
}

/** The command line of `npm run bench`: one scenario name and its options. */
export function parseBenchArgs(argv: string[], scenarios: readonly ScenarioInfo[]): Parsed {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        seconds: { type: 'string' },
        warmup: { type: 'string' },
        rounds: { type: 'string' },
        concurrency: { type: 'string' },
        profile: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    return { ok: false, message: (err as Error).message };
  }
  const { values, positionals } = parsed;
  if (values.help) return { ok: false, message: '' };
  if (positionals.length === 0) return { ok: false, message: 'name a scenario' };
  if (positionals.length > 1) return { ok: false, message: `one scenario at a time, not ${positionals.join(' ')}` };
  const scenario = scenarios.find((s) => s.name === positionals[0]);
  if (!scenario) return { ok: false, message: `unknown scenario "${positionals[0]}"` };
  const seconds = number('seconds', values.seconds, 5, (n) => n > 0 && n <= 3600, 'a number of seconds above 0');
  const warmupSeconds = number('warmup', values.warmup, 1, (n) => n >= 0 && n <= 600, 'a number of seconds, 0 or more');
  const rounds = number('rounds', values.rounds, 3, (n) => Number.isInteger(n) && n >= 1 && n <= 100, 'a whole number from 1 to 100');
  const concurrency = number('concurrency', values.concurrency, scenario.defaultConcurrency, (n) => Number.isInteger(n) && n >= 1 && n <= 4096, 'a whole number from 1 to 4096');
  const problem = [seconds, warmupSeconds, rounds, concurrency].find((x) => typeof x === 'string');
  if (problem !== undefined) return { ok: false, message: problem as string };
  return { ok: true, scenario: scenario.name, options: { seconds: seconds as number, warmupSeconds: warmupSeconds as number, rounds: rounds as number, concurrency: concurrency as number }, profile: values.profile === true };
}
