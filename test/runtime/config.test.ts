import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, urls } from '../../runtime/index.ts';

describe('configuration', () => {
  it('runs on a bare machine with defaults', () => {
    const c = loadConfig({}, '/srv');
    expect(c).toMatchObject({ port: 8080, host: '127.0.0.1', domain: 'localhost', dataDir: '/srv/.platform', databaseUrl: null, deviceCodeTtlSeconds: 600, devicePollIntervalSeconds: 5, seedDemo: true, maxConnectionsPerAddress: 1024, writeTimeoutMs: 30_000 });
    expect(urls(c)).toMatchObject({ api: 'http://api.localhost:8080' });
    expect(urls(c).mcp('demo')).toBe('http://mcp-demo.localhost:8080');
    expect(urls(c).agent('demo')).toBe('http://agent-demo.localhost:8080');
  });

  it('finds Chromium where the operator says or where Debian puts it; none there, or none, turns the captures off', () => {
    expect(loadConfig({ PLATFORM_CHROMIUM_PATH: process.execPath }).chromiumPath).toBe(process.execPath);
    expect(loadConfig({ PLATFORM_CHROMIUM_PATH: '/no/such/chromium' }).chromiumPath).toBeNull();
    expect(loadConfig({ PLATFORM_CHROMIUM_PATH: 'none' }).chromiumPath).toBeNull();
    expect(loadConfig({}).chromiumPath).toBe(existsSync('/usr/bin/chromium') ? '/usr/bin/chromium' : null);
  });

  it('omits the scheme-default port from public URLs', () => {
    const c = loadConfig({ PLATFORM_PUBLIC_SCHEME: 'https', PLATFORM_PUBLIC_PORT: '443', PLATFORM_DOMAIN: 'Example.com' });
    expect(urls(c).api).toBe('https://api.example.com');
  });

  it('fails fast naming every bad variable', () => {
    let err: unknown;
    try {
      loadConfig({ PORT: '70000', PLATFORM_DOMAIN: 'bad_domain', LOG_LEVEL: 'loud', DATABASE_URL: 'mysql://x', PLATFORM_DEVICE_CODE_TTL: '59', PLATFORM_SEED_DEMO: 'yes', PLATFORM_PUBLIC_SCHEME: 'ftp', PLATFORM_MAX_CONNECTIONS_PER_ADDRESS: '-1', PLATFORM_WRITE_TIMEOUT_MS: '1s' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const problems = (err as ConfigError).problems.join('\n');
    for (const name of ['PORT', 'PLATFORM_DOMAIN', 'LOG_LEVEL', 'DATABASE_URL', 'PLATFORM_DEVICE_CODE_TTL', 'PLATFORM_SEED_DEMO', 'PLATFORM_PUBLIC_SCHEME', 'PLATFORM_MAX_CONNECTIONS_PER_ADDRESS', 'PLATFORM_WRITE_TIMEOUT_MS']) {
      expect(problems).toContain(name);
    }
    expect(loadConfig({ PLATFORM_DEVICE_CODE_TTL: '60' }).deviceCodeTtlSeconds).toBe(60);
    expect(loadConfig({ PLATFORM_DEVICE_CODE_TTL: '3600' }).deviceCodeTtlSeconds).toBe(3600);
    expect(() => loadConfig({ PLATFORM_DEVICE_CODE_TTL: '3601' })).toThrow(ConfigError);
    // 0 turns the connection cap and the write timeout off.
    expect(loadConfig({ PLATFORM_MAX_CONNECTIONS_PER_ADDRESS: '0', PLATFORM_WRITE_TIMEOUT_MS: '0' })).toMatchObject({ maxConnectionsPerAddress: 0, writeTimeoutMs: 0 });
    // Routes compile ahead unless turned off; anything but true or false is named.
    expect(loadConfig({}).compileAhead).toBe(true);
    expect(loadConfig({ PLATFORM_COMPILE_AHEAD: 'false' }).compileAhead).toBe(false);
    expect(() => loadConfig({ PLATFORM_COMPILE_AHEAD: 'yes' })).toThrow(/PLATFORM_COMPILE_AHEAD="yes": expected true or false/);
    // The loop polls unless turned off.
    expect(loadConfig({}).loopPolling).toBe(true);
    expect(loadConfig({ PLATFORM_LOOP_POLLING: 'false' }).loopPolling).toBe(false);
    expect(() => loadConfig({ PLATFORM_LOOP_POLLING: 'on' })).toThrow(/PLATFORM_LOOP_POLLING="on": expected true or false/);
    // PostgreSQL statements are prepared unless turned off (a pooler in transaction mode).
    expect(loadConfig({}).databasePrepare).toBe(true);
    expect(loadConfig({ PLATFORM_DB_PREPARE: 'false' }).databasePrepare).toBe(false);
    expect(() => loadConfig({ PLATFORM_DB_PREPARE: '1' })).toThrow(/PLATFORM_DB_PREPARE="1": expected true or false/);
  });
});
