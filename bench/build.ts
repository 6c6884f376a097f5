// `npm run bench` compiles the bench first (a few seconds), as `npm install` compiles the CLI: every program it runs
// as a process of its own (entries.ts) into .build/bench, so each side is measured as `npm start` runs code, not tsx.
import path from 'node:path';
import { compileCli } from '../bin/compile-cli.ts';
import { BENCH_BUNDLE, BENCH_ENTRIES } from './entries.ts';

const { inputs } = await compileCli(BENCH_BUNDLE, BENCH_ENTRIES);
process.stderr.write(`compiled the bench's ${Object.keys(BENCH_ENTRIES).length} programs into ${path.relative(process.cwd(), BENCH_BUNDLE) || '.'} (${inputs.length} source files)\n`);
