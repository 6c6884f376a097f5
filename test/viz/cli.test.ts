import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';

/** `platform viz export` needs neither a store nor a server: it draws the statecharts from the source. */
describe('platform viz export', () => {
  it('prints DOT', async () => {
    const r = await runCli(['viz', 'export', 'device-session', '--format', 'dot'], {});
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^digraph "DeviceSession" \{\n/);
    expect(r.stdout).toContain('id="state-DeviceSession.pending"');
    expect(r.stdout).toContain('label="REDEEM [sameClient]"');
    expect(r.stdout.trimEnd().endsWith('}')).toBe(true);
  });

  it('prints Mermaid', async () => {
    const r = await runCli(['viz', 'export', 'device-session', '--format', 'mermaid'], {});
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^stateDiagram-v2\n/);
    expect(r.stdout).toContain('[*] --> DeviceSession__pending');
    expect(r.stdout).toContain('DeviceSession__expired --> [*]');
  });

  it('prints SVG, the default format', async () => {
    for (const args of [['--format', 'svg'], []]) {
      const r = await runCli(['viz', 'export', 'account', ...args], {});
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain('<svg');
      expect(r.stdout.trimEnd().endsWith('</svg>')).toBe(true);
      expect(r.stdout).toContain('id="state&#45;Account.status.suspended"');
    }
  });

  it('exits 2 listing the machines for an unknown machine, and for an unknown format', async () => {
    const unknown = await runCli(['viz', 'export', 'no-such-machine'], {});
    expect(unknown.code).toBe(2);
    expect(unknown.stdout).toBe('');
    expect(unknown.stderr).toContain('unknown machine "no-such-machine"');
    expect(unknown.stderr).toContain('machines: device-session, account, plugin-version, gateway');

    const format = await runCli(['viz', 'export', 'account', '--format', 'png'], {});
    expect(format.code).toBe(2);
    expect(format.stderr).toContain('expected svg, dot, mermaid');

    const missing = await runCli(['viz', 'export'], {});
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('machines: device-session, account, plugin-version, gateway');
  });
});
