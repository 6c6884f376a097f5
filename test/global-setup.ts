import { skipReasons } from './helpers/env.ts';

export default function setup() {
  const skipped = Object.entries(skipReasons).filter(([, r]) => r !== null);
  if (skipped.length === 0) return;
  const lines = skipped.map(([what, why]) => `  - ${what} suites skipped: ${why}`);
  process.stdout.write(`\nSuites that will be skipped on this machine:\n${lines.join('\n')}\n\n`);
  if (process.env.CI === 'true') throw new Error('CI must run every suite; see the reasons above');
}
