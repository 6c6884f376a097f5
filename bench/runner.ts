import { performance } from 'node:perf_hooks';
import { interruption } from './cleanup.ts';
import { cpuMeter, type Watched } from './cpu.ts';
import { medianByKey, medianOfRounds, summarize, type Summary } from './stats.ts';

export interface Phase {
  label: string;
  /** Callers that each run `call` back to back (a closed loop): at most this many calls are in flight. */
  concurrency: number;
  call: () => Promise<unknown>;
}

export interface RunOptions {
  seconds: number;
  warmupSeconds: number;
  /** The phases run in turn this many times and their samples are pooled, so slow drift hits every phase alike. */
  rounds: number;
}

export interface Measured extends Summary {
  label: string;
  /** Failures by kind (error code, else message), so a run with errors says what they were. */
  errorKinds: Record<string, number>;
  /** Each round's own figures; the phase's figures are their medians (stats.ts medianOfRounds). */
  rounds: Summary[];
  /** CPU per watched process while the phase was measured, in % of one core (median of the rounds). */
  cpu: Record<string, number>;
}

const tty = process.stderr.isTTY === true;


/** A line on stderr that the next status or progress line replaces on a terminal. */
export function status(text: string): void {
  process.stderr.write(tty ? `\r\x1b[K${text}\n` : `${text}\n`);
}

function errorKind(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown } | null;
  if (e && typeof e.code === 'string') return e.code;
  const message = e && typeof e.message === 'string' ? e.message : String(err);
  return message.slice(0, 120);
}

interface Tally {
  samples: number[];
  errors: number;
  errorKinds: Record<string, number>;
  seconds: number;
}

async function closedLoop(phase: Phase, seconds: number, tally: Tally, show: (elapsed: number, calls: number, errors: number) => void): Promise<void> {
  const start = performance.now();
  const end = start + seconds * 1000;
  let lastShown = start;
  let calls = 0;
  // Redrawn from a timer rather than per call, so the line costs the same at 1,000 and at 100,000 calls/s.
  const timer = setInterval(() => {
    const now = performance.now();
    if (!tty && now - lastShown < 1000) return;
    lastShown = now;
    show((now - start) / 1000, calls, tally.errors);
  }, 200);
  try {
    await Promise.all(
      Array.from({ length: phase.concurrency }, async () => {
        while (performance.now() < end && !interruption.signal.aborted) {
          const t0 = performance.now();
          try {
            await phase.call();
            tally.samples.push(performance.now() - t0);
            calls++;
          } catch (err) {
            tally.errors++;
            const kind = errorKind(err);
            tally.errorKinds[kind] = (tally.errorKinds[kind] ?? 0) + 1;
          }
        }
      }),
    );
  } finally {
    clearInterval(timer);
  }
  interruption.signal.throwIfAborted();
  // Calls still in flight at the deadline were allowed to finish and are counted, so the time they took is too.
  tally.seconds += (performance.now() - start) / 1000;
}

/**
 * Runs each phase for `seconds` after a warm-up, in turn, `rounds` times, with a live progress line on stderr, and
 * reports each phase's median round: rounds interleave the phases, so drift of a shared machine hits every side alike,
 * and the median drops the round a neighbour spoiled. The CPU each `watch`ed process (and this load process) used is
 * read around every measured window. A phase whose warm-up succeeded not once stops the run: measuring a broken setup
 * would only print nonsense.
 */
export async function measure(scenario: string, phases: Phase[], opts: RunOptions, watch: Watched[] = []): Promise<Measured[]> {
  const tallies = phases.map((): Tally => ({ samples: [], errors: 0, errorKinds: {}, seconds: 0 }));
  const perRound = phases.map((): Summary[] => []);
  const cpuRounds = phases.map((): Record<string, number>[] => []);
  const meter = cpuMeter(watch);
  const rate = (calls: number, elapsed: number) => Math.round(calls / Math.max(elapsed, 0.001)).toLocaleString('en-US');
  for (let round = 1; round <= opts.rounds; round++) {
    for (const [i, phase] of phases.entries()) {
      const prefix = `${scenario} ${opts.rounds > 1 ? `round ${round}/${opts.rounds} ` : ''}· ${phase.label} (${phase.concurrency} in flight)`;
      const line = (text: string) => process.stderr.write(tty ? `\r\x1b[K${text}` : `${text}\n`);
      if (round === 1 && opts.warmupSeconds > 0) {
        const warm: Tally = { samples: [], errors: 0, errorKinds: {}, seconds: 0 };
        await closedLoop(phase, opts.warmupSeconds, warm, (t, n) => line(`${prefix}: warming up ${t.toFixed(1)}/${opts.warmupSeconds} s, ${n} calls`));
        if (warm.samples.length === 0 && warm.errors > 0) throw new Error(`${phase.label}: every warm-up call failed (${Object.keys(warm.errorKinds).join('; ')})`);
      }
      const tally = tallies[i]!;
      const before = { samples: tally.samples.length, seconds: tally.seconds, errors: tally.errors };
      const cpu = meter.start();
      await closedLoop(phase, opts.seconds, tally, (t, n, e) => line(`${prefix}: ${t.toFixed(1)}/${opts.seconds} s, ${n.toLocaleString('en-US')} calls, ${rate(n, t)}/s, ${e - before.errors} errors`));
      cpuRounds[i]!.push(cpu.stop());
      const s = summarize(tally.samples.slice(before.samples), tally.seconds - before.seconds, tally.errors - before.errors);
      perRound[i]!.push(s);
      status(`${prefix}: ${Math.round(s.throughput).toLocaleString('en-US')} calls/s, p99 ${Number.isFinite(s.p99) ? s.p99.toFixed(3) : '—'} ms${s.errors ? `, ${s.errors} errors` : ''}`);
    }
  }
  return phases.map((phase, i) => {
    const t = tallies[i]!;
    const rounds = perRound[i]!;
    const cpu = medianByKey(cpuRounds[i]!);
    return { label: phase.label, ...medianOfRounds(rounds, summarize(t.samples, t.seconds, t.errors)), errorKinds: t.errorKinds, rounds, cpu };
  });
}
