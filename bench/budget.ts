/** A measured phase: its calls/s and its processes' CPU in % of a core (runner.ts). */
export interface Side {
  throughput: number;
  cpu?: Record<string, number>;
}

export interface BudgetInput {
  cores: number;
  /** The target's factor on the reference's calls/s. */
  ratio: number;
  reference: Side;
  ours: Side;
  /** The CPU column keys of our process and of the load generator (cpu.ts: `load`). */
  ourProcess: string;
  loadProcess?: string;
  /** A bare server's row and its CPU key, whose CPU per call is the least any HTTP server here spends. */
  echo?: { row: Side; process: string };
}

export interface Budget {
  cores: number;
  /** The target's factor on the reference's calls/s. */
  ratio: number;
  /** The rate the target asks for, calls/s. */
  rate: number;
  /** CPU per call the machine has at that rate, µs (all processes). */
  machineUs: number;
  /** The load generator's CPU per call, µs (while it drove ours). */
  loadUs: number;
  /** What is left for our process per call at that rate, µs (every thread). */
  leftUs: number;
  /** What our process spent per call, µs: every thread, and its main thread alone. */
  oursUs: number;
  oursMainUs: number | null;
  /** The bare echo's CPU per call, µs (every thread). */
  echoUs: number | null;
}

/** µs of CPU per call of a process whose CPU column says `percent` % of a core at `rate` calls/s. */
const perCall = (percent: number | undefined, rate: number) => (percent === undefined || rate <= 0 ? null : (percent / 100 / rate) * 1e6);

/**
 * Whether a throughput target was within this machine's reach at all, from the run's own figures. Every process of a
 * run shares the machine's cores, so at `ratio` times the reference's calls/s a call may cost at most cores / rate of
 * CPU across all of them. The load generator's share is measured (its CPU per call while it drove our side), and what
 * is left is all our process could spend per call, in every thread. Set beside what ours did spend (and its main
 * thread), and beside a bare echo (a server doing no work per call), a missed target says whether code could close
 * the gap, or whether the machine cannot run both the load and the work the call needs that fast.
 * Null when a figure it needs is missing (no CPU column, nothing measured).
 */
export function cpuBudget(b: BudgetInput): Budget | null {
  const rate = b.reference.throughput * b.ratio;
  const cpu = b.ours.cpu ?? {};
  const loadUs = perCall(cpu[b.loadProcess ?? 'load'], b.ours.throughput);
  const oursUs = perCall(cpu[b.ourProcess], b.ours.throughput);
  if (!(rate > 0) || loadUs === null || oursUs === null) return null;
  const machineUs = (b.cores * 1e6) / rate;
  const echoCpu = b.echo?.row.cpu?.[b.echo.process];
  return {
    cores: b.cores,
    ratio: b.ratio,
    rate,
    machineUs,
    loadUs,
    leftUs: machineUs - loadUs,
    oursUs,
    oursMainUs: perCall(cpu[`${b.ourProcess}:main`], b.ours.throughput),
    echoUs: b.echo ? perCall(echoCpu, b.echo.row.throughput) : null,
  };
}

const us = (n: number) => `${Math.round(n).toLocaleString('en-US')} µs`;
const rate = (n: number) => `${Math.round(n).toLocaleString('en-US')} calls/s`;

/** The budget as a sentence for the report's notes. */
export function budgetNote(label: string, b: Budget): string {
  const main = b.oursMainUs === null ? '' : ` (its main thread ${us(b.oursMainUs)}, the other threads ${us(b.oursUs - b.oursMainUs)})`;
  const echo = b.echoUs === null ? '' : ` A bare HTTP echo spent ${us(b.echoUs)} a call.`;
  // Our other threads' work (the sandbox's, the database's) with a main thread that did no more than the bare echo.
  const least = b.oursMainUs !== null && b.echoUs !== null ? b.oursUs - b.oursMainUs + b.echoUs : null;
  const verdict =
    b.leftUs <= 0
      ? ' The load generator alone would need more than the machine has.'
      : b.oursUs <= b.leftUs
        ? ' Ours fits: the gap is not the machine.'
        : ` Ours would have to spend ${Math.round((1 - b.leftUs / b.oursUs) * 100)} % less per call.${least !== null && least > b.leftUs ? ` Even with a main thread that did no more than the bare echo, the other threads' work would make it ${us(least)}.` : ''}`;
  return `CPU budget of ${label} at ${b.ratio}× the reference (${rate(b.rate)}): the ${b.cores} cores have ${us(b.machineUs)} of CPU per call; the load generator took ${us(b.loadUs)} a call driving ours, which leaves ${us(b.leftUs)} for the node's every thread. Ours spent ${us(b.oursUs)}${main}.${echo}${verdict}`;
}
