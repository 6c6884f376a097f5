import { spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { FormData, request } from 'undici';
import { hostileUploads } from '../../test/helpers/hostile-archives.ts';
import { interruption, scope } from '../cleanup.ts';
import { privateDatabase, SetupError, stopChild } from '../cluster.ts';
import { entryArgv } from '../entries.ts';
import { status, type Measured } from '../runner.ts';
import { ratio, summarize } from '../stats.ts';
import { runParameters, type Scenario } from '../scenario.ts';

/** The bystander's pace: one request at a time, this long between them. */
const GAP_MS = 5;
/** What the hostile-input tests hold the bystander's worst latency to. */
const MAX_MS = 100;

interface NodeInfo {
  url: string;
  attackerKey: string;
  bystanderKey: string;
  driver: string;
}

/**
 * A bystander tenant's requests (`GET /v1/capabilities`, one at a time) to a node running as its own process, first
 * while the node is idle, then while another tenant uploads hostile archives back to back: a WIT file of blank lines,
 * a component with a 28 MiB custom section, YAML lists at and past their cap, a gzip bomb. On the embedded database
 * unless DATABASE_URL is set.
 */
export const hostileUpload: Scenario = {
  name: 'hostile-upload',
  summary: "a bystander tenant's latency while another tenant uploads hostile archives vs the same node idle",
  needs: [],
  defaultConcurrency: 1,
  async run(opts) {
    const s = scope();
    try {
      status('hostile-upload: building the hostile archives and starting the node');
      const hostile = await hostileUploads();
      const env: NodeJS.ProcessEnv = { ...process.env };
      if (process.env.DATABASE_URL) env.DATABASE_URL = await privateDatabase(s, process.env.DATABASE_URL);
      const node = await startHostileNode(s, env);

      const bystander = async (label: string, seconds: number): Promise<Measured> => {
        const lat: number[] = [];
        let errors = 0;
        const start = performance.now();
        while (performance.now() - start < seconds * 1000 && !interruption.signal.aborted) {
          const t0 = performance.now();
          const res = await request(`${node.url}/v1/capabilities?limit=5`, { headers: { host: 'api.localhost', authorization: `Bearer ${node.bystanderKey}` } });
          await res.body.text();
          if (res.statusCode === 200) lat.push(performance.now() - t0);
          else errors++;
          await sleep(GAP_MS);
        }
        const m = { label, ...summarize(lat, (performance.now() - start) / 1000, errors), errorKinds: {}, rounds: [], cpu: {} };
        status(`hostile-upload · ${label}: ${m.calls} requests, p99 ${m.p99.toFixed(1)} ms, max ${m.max.toFixed(1)} ms`);
        return m;
      };

      // Warm-up: the bystander's path, and one round of the hostile uploads (threads start, statements get planned).
      await bystander('warm-up', Math.max(1, opts.warmupSeconds));
      const outcomes: Record<string, Record<number, number>> = {};
      let uploads = 0;
      const attack = async (stop: () => boolean) => {
        for (let i = 0; !stop(); i++) {
          const h = hostile[i % hostile.length]!;
          const form = new FormData();
          form.append('archive', new Blob([h.archive]), `${h.name}.npack`);
          const res = await request(`${node.url}/v1/capabilities/upload`, { method: 'POST', headers: { host: 'api.localhost', authorization: `Bearer ${node.attackerKey}` }, body: form });
          await res.body.text();
          const by = (outcomes[h.name] ??= {});
          by[res.statusCode] = (by[res.statusCode] ?? 0) + 1;
          uploads++;
        }
      };
      await attack(() => uploads >= hostile.length);
      uploads = 0;
      for (const k of Object.keys(outcomes)) delete outcomes[k];

      const seconds = opts.seconds * opts.rounds;
      const idle = await bystander('bystander, node idle', seconds);
      let attacking = true;
      const attacker = attack(() => !attacking);
      const loaded = await bystander('bystander, other tenant uploading hostile archives', seconds);
      attacking = false;
      await attacker;
      const r = ratio(loaded.p99, idle.p99);
      return {
        title: "a bystander tenant's latency while another tenant sends hostile uploads",
        parameters: { ...runParameters(opts), 'in flight': `bystander 1 every ${GAP_MS} ms, attacker 1 upload at a time`, database: node.driver },
        rows: [
          { ...idle, role: 'reference' },
          {
            ...loaded,
            role: 'ours',
            vs: idle.label,
            targets: [
              { description: `max < ${MAX_MS} ms (${loaded.max.toFixed(1)} ms)`, met: loaded.max < MAX_MS },
              { description: `p99 ${r.toFixed(2)}× idle`, met: true },
            ],
          },
        ],
        notes: [
          `The attacker sent ${uploads} uploads while the bystander was timed; answers by archive: ${Object.entries(outcomes)
            .map(([name, by]) => `${name} ${Object.entries(by).map(([code, n]) => `${n}×${code}`).join(' ')}`)
            .join('; ')}.`,
          'Admitted uploads activate by themselves, so their transpiling runs during the measurement too.',
        ],
      };
    } finally {
      await s.close();
    }
  },
};

function startHostileNode(s: ReturnType<typeof scope>, env: NodeJS.ProcessEnv): Promise<NodeInfo> {
  const child = spawn(process.execPath, ['--max-semi-space-size=64', ...entryArgv('hostile-node')], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  s.defer(`stop the node (pid ${child.pid})`, () => stopChild(child, 15_000));
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new SetupError(`the node printed nothing within 60 s\n${err}`)), 60_000);
    child.stderr!.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (!line) return;
      clearTimeout(timer);
      resolve(JSON.parse(line) as NodeInfo);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      reject(new SetupError(`the node exited (${signal ?? code}) while starting\n${err}`));
    });
  });
}
