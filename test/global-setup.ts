import { skipReasons } from './helpers/env.ts';
import { buildGrantsComponent, buildShapesComponent } from './helpers/js-components.ts';

export default async function setup() {
  const skipped = Object.entries(skipReasons).filter(([, r]) => r !== null);
  if (skipped.length) {
    const lines = skipped.map(([what, why]) => `  - ${what} suites skipped: ${why}`);
    process.stdout.write(`\nSuites that will be skipped on this machine:\n${lines.join('\n')}\n\n`);
    if (process.env.CI === 'true') throw new Error('CI must run every suite; see the reasons above');
  }
  // The JS test components take 10-20 s of CPU each to build: build them (or find them cached) before any suite
  // starts, so the builds never starve the timing-sensitive cluster suites running beside them.
  await buildGrantsComponent();
  await buildShapesComponent();
}
