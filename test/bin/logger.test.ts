import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger, prettyLogs } from '../../bin/logger.ts';
import { ConfigError, loadConfig } from '../../runtime/index.ts';
import { ROOT } from '../helpers/cli.ts';

const SECRET = 'Bearer very-secret-credential';

/**
 * A process that logs one line with the node's logger (as `platform serve` makes it) and tells on stderr whether
 * the pretty formatter was loaded: what a real process does with a pipe or a terminal as its stdout.
 */
const PROBE = `import { createRequire } from 'node:module';
const { createLogger } = await import(${JSON.stringify(path.join(ROOT, 'bin/logger.ts'))});
createLogger('info', undefined, process.env.FORMAT).info({ req: { headers: { authorization: ${JSON.stringify(SECRET)} } } }, 'hello from the probe');
const loaded = Object.keys(createRequire(import.meta.url).cache).some((k) => k.includes('/pino-pretty/'));
process.stderr.write('pretty-loaded=' + loaded + '\\n');
`;

function capture() {
  let text = '';
  return { stream: new Writable({ write: (chunk, _e, cb) => ((text += chunk.toString()), cb()) }), text: () => text };
}

describe('the node logger', () => {
  let dir: string;
  let probe: string;
  const run = (format: string, terminal = false) => {
    const env = { ...process.env, FORMAT: format };
    // `script` gives the process a pseudo-terminal as its stdout, as a shell in a terminal would.
    const r = terminal
      ? spawnSync('script', ['-qec', `node --import tsx ${probe}`, '/dev/null'], { cwd: ROOT, env, encoding: 'utf8' })
      : spawnSync('node', ['--import', 'tsx', probe], { cwd: ROOT, env, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    return { stdout: r.stdout, stderr: r.stderr };
  };

  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'logger-'));
    probe = path.join(dir, 'probe.mjs');
    writeFileSync(probe, PROBE);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('writes JSON lines to a pipe and never loads the pretty formatter for it', () => {
    const { stdout, stderr } = run('auto');
    const line = JSON.parse(stdout.trim());
    expect(line).toMatchObject({ level: 30, msg: 'hello from the probe', req: { headers: { authorization: '[redacted]' } } });
    expect(stderr).toContain('pretty-loaded=false');
  });

  it('writes pretty, coloured lines to a terminal, and JSON there when told to', () => {
    if (!existsSync('/usr/bin/script')) throw new Error('util-linux `script` is needed to give the probe a terminal');
    const pretty = run('auto', true).stdout;
    expect(pretty).toMatch(/\[\d\d:\d\d:\d\d\.\d{3}\] \x1b\[32mINFO\x1b\[39m: \x1b\[36mhello from the probe/);
    expect(pretty).toContain('pretty-loaded=true');
    expect(pretty).not.toContain('very-secret');
    const json = run('json', true).stdout;
    expect(json).toContain('"msg":"hello from the probe"');
    expect(json).toContain('pretty-loaded=false');
  });

  it('writes pretty lines to a pipe when told to, credentials still redacted', () => {
    const { stdout, stderr } = run('pretty');
    expect(stdout).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: hello from the probe\n/);
    expect(stdout).toContain('"authorization": "[redacted]"');
    expect(stdout).not.toContain('very-secret');
    expect(stderr).toContain('pretty-loaded=true');
  });

  it('decides by the format and whether the logs go to a terminal; a stream given in is JSON unless told otherwise', () => {
    expect([prettyLogs('auto', true), prettyLogs('auto', false), prettyLogs('json', true), prettyLogs('pretty', false)]).toEqual([true, false, false, true]);
    const json = capture();
    createLogger('info', json.stream).info('to a stream');
    expect(JSON.parse(json.text())).toMatchObject({ level: 30, msg: 'to a stream' });
    const pretty = capture();
    createLogger('info', pretty.stream, 'pretty').warn({ req: { headers: { 'x-platform-operator-token': 'op-secret' } } }, 'pretty to a stream');
    expect(pretty.text()).toMatch(/WARN: pretty to a stream/);
    expect(pretty.text()).not.toContain('op-secret');
  });

  it('reads PLATFORM_LOG_FORMAT and refuses anything but auto, json and pretty', () => {
    expect(loadConfig({}).logFormat).toBe('auto');
    expect(loadConfig({ PLATFORM_LOG_FORMAT: 'pretty' }).logFormat).toBe('pretty');
    expect(loadConfig({ PLATFORM_LOG_FORMAT: 'json' }).logFormat).toBe('json');
    expect(() => loadConfig({ PLATFORM_LOG_FORMAT: 'text' })).toThrow(ConfigError);
    expect(() => loadConfig({ PLATFORM_LOG_FORMAT: 'text' })).toThrow('PLATFORM_LOG_FORMAT="text": expected one of auto, json, pretty');
  });
});
