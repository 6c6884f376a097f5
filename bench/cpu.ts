import { readdirSync, readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

/**
 * A process whose CPU a bench reports beside its figures: a server of one side, or a reference; or, by `command`
 * name, every process of a shared server (`nats-server`, PostgreSQL's one process per connection) added up.
 */
export type Watched = { label: string; pid: number } | { label: string; command: string };

// Linux reports a process's CPU (all its threads) in clock ticks, 100 per second on every kernel Node supports.
const TICKS_PER_S = 100;

/** User plus system CPU seconds of `pid` so far, from /proc; undefined where there is no /proc or no such process. */
function cpuSeconds(pid: number, file = `/proc/${pid}/stat`): number | undefined {
  try {
    const stat = readFileSync(file, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: the fields after it start past the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_S;
  } catch {
    return undefined;
  }
}

/**
 * The main thread of `pid` (a Node process's event loop): its CPU seconds, and the seconds it was ready to run but
 * waited for a core (the kernel's schedstat), so far. A loop whose CPU and wait add up to its whole window was the
 * bottleneck of its process; the wait is what the machine's other work cost it.
 */
function mainThread(pid: number): { cpu: number; waited?: number } | undefined {
  const cpu = cpuSeconds(pid, `/proc/${pid}/task/${pid}/stat`);
  if (cpu === undefined) return undefined;
  try {
    // Nanoseconds on a core, nanoseconds waiting on a run queue, time slices.
    const waitedNs = Number(readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ')[1]);
    return Number.isFinite(waitedNs) ? { cpu, waited: waitedNs / 1e9 } : { cpu };
  } catch {
    return { cpu };
  }
}

/** Below this share of a core over a window, a process's main thread is not reported: it was not what limited it. */
const MAIN_THREAD_FROM = 5;

/** The processes running `command` now (their /proc `comm`), for a server the bench did not start. */
function pidsOf(command: string): number[] {
  try {
    return readdirSync('/proc')
      .filter((d) => /^\d+$/.test(d))
      .map(Number)
      .filter((pid) => {
        try {
          return readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === command;
        } catch {
          return false;
        }
      });
  } catch {
    return [];
  }
}

/** CPU seconds of the watched processes so far, per pid (only those that can be read). */
function sample(w: Watched): Map<number, number> {
  const out = new Map<number, number>();
  for (const pid of 'pid' in w ? [w.pid] : pidsOf(w.command)) {
    const s = cpuSeconds(pid);
    if (s !== undefined) out.set(pid, s);
  }
  return out;
}

const own = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

/**
 * Reads the CPU the watched processes and this one (the load generator, `load`) used over a window, in % of one
 * core: 150 means one and a half cores were busy. A process that cannot be read is left out, not reported as idle.
 * For a process watched by pid that was busy, its main thread too: `<label>:main`, its CPU, and `<label>:waiting`, the
 * time it was ready to run but waited for a core, both in % of the window.
 */
export function cpuMeter(watch: Watched[]) {
  return {
    start() {
      const t0 = performance.now();
      const before = new Map(watch.map((w) => [w.label, sample(w)]));
      const mainBefore = new Map(watch.flatMap((w) => ('pid' in w ? [[w.label, mainThread(w.pid)] as const] : [])));
      const ownBefore = own();
      return {
        stop(): Record<string, number> {
          const wall = (performance.now() - t0) / 1000;
          const out: Record<string, number> = {};
          for (const w of watch) {
            // Processes that existed over the whole window; one that started meanwhile would bring its whole past.
            const a = before.get(w.label)!;
            const b = sample(w);
            let used = 0;
            let seen = 0;
            for (const [pid, s] of b) {
              const s0 = a.get(pid);
              if (s0 === undefined) continue;
              used += s - s0;
              seen++;
            }
            if (seen > 0 && wall > 0) out[w.label] = Math.round((used / wall) * 100);
            const m0 = mainBefore.get(w.label);
            const m1 = 'pid' in w ? mainThread(w.pid) : undefined;
            if (!m0 || !m1 || (out[w.label] ?? 0) < MAIN_THREAD_FROM) continue;
            out[`${w.label}:main`] = Math.round(((m1.cpu - m0.cpu) / wall) * 100);
            if (m0.waited !== undefined && m1.waited !== undefined) out[`${w.label}:waiting`] = Math.round(((m1.waited - m0.waited) / wall) * 100);
          }
          out.load = Math.round(((own() - ownBefore) / Math.max(wall, 0.001)) * 100);
          return out;
        },
      };
    },
  };
}
