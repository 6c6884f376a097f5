// `npm run bench -- <scenario>`: runs one scenario, prints its markdown table, writes JSON, markdown and SVG.
import path from 'node:path';
import { parseBenchArgs, usage } from './args.ts';
import { cleanupAll, interruption } from './cleanup.ts';
import { SetupError } from './cluster.ts';
import { profileInto, profilesWritten } from './profiles.ts';
import { machineInfo, markdown, RESULTS_DIR, writeReport, type Report } from './report.ts';
import { SCENARIOS } from './scenarios/index.ts';
import { measureThreadWake } from './thread-wake.ts';

const parsed = parseBenchArgs(process.argv.slice(2), SCENARIOS);
if (!parsed.ok) {
  process.stderr.write(`${parsed.message ? `bench: ${parsed.message}\n\n` : ''}${usage(SCENARIOS)}\n`);
  process.exit(parsed.message ? 2 : 0);
}
const scenario = SCENARIOS.find((s) => s.name === parsed.scenario)!;

let interrupted = false;
const interrupt = (signal: NodeJS.Signals) => {
  if (interrupted) {
    process.stderr.write(`\n${signal} again: exiting without finishing the cleanup\n`);
    process.exit(130);
  }
  interrupted = true;
  interruption.abort(new Error(`interrupted by ${signal}`));
  process.stderr.write(`\n${signal}: stopping the children, dropping the database, closing NATS...\n`);
  void cleanupAll().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
};
process.on('SIGINT', interrupt);
process.on('SIGTERM', interrupt);
process.on('unhandledRejection', (err) => {
  process.stderr.write(`bench failed: ${(err as Error)?.stack ?? String(err)}\n`);
  void cleanupAll().finally(() => process.exit(1));
});

const startedAt = new Date().toISOString();
if (parsed.profile) profileInto(path.join(RESULTS_DIR, `${scenario.name}-${startedAt.replace(/[:.]/g, '-')}-profiles`));
try {
  // Before anything of the scenario runs, on a machine as quiet as it will be.
  const threadWake = await measureThreadWake();
  const result = await scenario.run(parsed.options);
  // The children write their profiles as they exit: after the cleanup.
  await cleanupAll();
  const profiles = profilesWritten();
  if (profiles) result.notes.push(`CPU profiles of our side (open in Chrome DevTools or speedscope): ${profiles.files.length ? `${profiles.files.length} files in ${path.relative(process.cwd(), profiles.dir)}` : 'none were written (this scenario runs our side in the bench process, or a child did not exit cleanly)'}.`);
  const report: Report = { scenario: scenario.name, startedAt, machine: { ...machineInfo(), ...(threadWake ? { threadWake } : {}) }, ...result };
  const files = writeReport(report);
  process.stdout.write(`\n${markdown(report)}\nresults:\n  ${files.json}\n  ${files.md}\n  ${files.svg}\n`);
  process.exit(0);
} catch (err) {
  // After a signal the children are being stopped under the scenario's feet; its errors are that, not news.
  if (interrupted) await new Promise(() => {});
  process.stderr.write(err instanceof SetupError ? `bench: ${err.message}\n` : `bench failed: ${(err as Error)?.stack ?? String(err)}\n`);
  await cleanupAll();
  process.exit(1);
}
