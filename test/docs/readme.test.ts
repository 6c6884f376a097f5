import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SETTINGS } from '../../runtime/index.ts';
import { ROOT } from '../helpers/cli.ts';

const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');

describe('README', () => {
  it('starts with the two commands a newcomer runs', () => {
    const firstBlock = readme.indexOf('```sh');
    expect(readme.slice(firstBlock, readme.indexOf('```', firstBlock + 5))).toMatch(/npm install\nnpm start/);
    expect(readme.indexOf('npm test')).toBeLessThan(readme.indexOf('## '));
  });

  it('documents every setting of runtime/config.ts, with its default, and no other', () => {
    const rows = [...readme.matchAll(/^\| `([A-Z_]+)` \| `([^`]*)` \|/gm)].map((m) => [m[1], m[2]]);
    expect(rows).toEqual(SETTINGS.map((s) => [s.env, s.default]));
  });
});
