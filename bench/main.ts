import { markdown, writeReport, type Report } from './report.ts';
import { actorAsk } from './scenarios/actor-ask.ts';
import { sandboxCall } from './scenarios/sandbox-call.ts';
import { clusterScale } from './scenarios/cluster-scale.ts';
import { noisyNeighbor } from './scenarios/noisy-neighbor.ts';

const SCENARIOS: Record<string, (seconds: number) => Promise<Report>> = {
  'actor-ask': actorAsk,
  'sandbox-call': sandboxCall,
  'cluster-scale': clusterScale,
  'noisy-neighbor': noisyNeighbor,
};

async function main() {
  const [name, ...rest] = process.argv.slice(2);
  const i = rest.indexOf('--seconds');
  const seconds = i >= 0 ? Number(rest[i + 1]) : 5;
  const scenario = name ? SCENARIOS[name] : undefined;
  if (!scenario || !Number.isFinite(seconds) || seconds <= 0) {
    process.stderr.write(`usage: npm run bench -- <scenario> [--seconds n]\nscenarios: ${Object.keys(SCENARIOS).join(', ')}\n`);
    process.exit(2);
  }
  const report = await scenario(seconds);
  const files = writeReport(report);
  process.stdout.write(`${markdown(report)}\nresults: ${files.json}, ${files.md}, ${files.svg}\n`);
  process.exit(0);
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${(err as Error)?.stack ?? String(err)}\n`);
  process.exit(1);
});
