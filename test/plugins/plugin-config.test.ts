import { describe, expect, it } from 'vitest';
import { MAX_MEMORY_BYTES, parsePluginConfig, parsePluginEnv } from '../../runtime/plugins/index.ts';
import type { PlatformError } from '../../runtime/index.ts';

const problemsOf = (text: string) => {
  try {
    parsePluginConfig(text);
  } catch (err) {
    const problems = ((err as PlatformError).data as { problems?: string[] } | undefined)?.problems ?? [];
    return problems.length ? problems : [(err as PlatformError).message];
  }
  return [];
};

describe('plugin config (platform.yaml)', () => {
  it('accepts a full config and fills defaults for absent sections', () => {
    const c = parsePluginConfig(`
schema_version: "1.0"
metadata: { name: weather, description: Forecasts, author: Ada, license: MIT, tags: [weather], homepage: https://example.com }
permissions:
  network: { allow: [{ host: api.example.com }, { host: "*.example.org:8443" }] }
  filesystem: { allow: [{ uri: "fs://cache/**", access: [read, write] }] }
  environment: { allow: [{ key: API_TOKEN }] }
resources: { limits: { memory: 128Mi, timeout: 10s } }
`);
    expect(c.permissions.network.allow).toEqual([{ host: 'api.example.com' }, { host: '*.example.org:8443' }]);
    expect(c.resources.limits).toEqual({ memory: '128Mi', timeout: '10s' });
    const minimal = parsePluginConfig('schema_version: "1.0"');
    expect(minimal).toEqual({
      schema_version: '1.0',
      metadata: {},
      permissions: { network: { allow: [] }, filesystem: { allow: [] }, environment: { allow: [] } },
      resources: { limits: { memory: '64Mi', timeout: '5s' } },
      config: {},
    });
  });

  it('reads the wasi:config values and bounds them', () => {
    expect(parsePluginConfig('schema_version: "1.0"\nconfig: { greeting: hello, api.base: "https://x" }').config).toEqual({ greeting: 'hello', 'api.base': 'https://x' });
    expect(problemsOf(`schema_version: "1.0"\nconfig: { k: "${'v'.repeat(4096)}" }`)).toEqual([]);
    expect(problemsOf(`schema_version: "1.0"\nconfig: { k: "${'v'.repeat(4097)}" }`)[0]).toMatch(/^\/config\/k: /);
    expect(problemsOf('schema_version: "1.0"\nconfig: { k: 3 }')[0]).toMatch(/^\/config\/k: must be string/);
    expect(problemsOf('schema_version: "1.0"\nconfig: { "bad key": x }')[0]).toMatch(/^\/config/);
  });

  it('keeps filesystem URIs inside the workspace', () => {
    const ok = (uri: string) => problemsOf(`schema_version: "1.0"\npermissions: { filesystem: { allow: [{ uri: "${uri}", access: [read] }] } }`);
    expect(ok('fs://data/**')).toEqual([]);
    expect(ok('fs://a..b/*.txt')).toEqual([]);
    for (const bad of ['fs://../etc/**', 'fs://data/../../x', '/etc/passwd', 'file:///etc/passwd']) {
      expect(ok(bad)).toEqual(['/permissions/filesystem/allow/0/uri: must be a workspace path like fs://data/** (no "..")']);
    }
  });

  it('requires schema_version to be the string "1.0"', () => {
    expect(problemsOf('schema_version: 1.0')).toEqual(['/schema_version: must be the string "1.0"']);
    expect(problemsOf('schema_version: "2.0"')).toEqual(['/schema_version: must be the string "1.0"']);
    expect(problemsOf('metadata: {}')[0]).toMatch(/schema_version/);
  });

  it('names the path of every problem at once', () => {
    const problems = problemsOf(`
schema_version: "1.0"
metadata: { name: Not_Valid, colour: red }
permissions: { filesystem: { allow: [{ uri: x, access: [execute] }] }, environment: { allow: [{ key: "1BAD" }] } }
resources: { limits: { memory: 64MB, timeout: soon } }
`);
    expect(problems).toEqual(
      expect.arrayContaining([
        '/metadata: unknown field "colour"',
        expect.stringMatching(/^\/metadata\/name: /),
        expect.stringMatching(/^\/permissions\/filesystem\/allow\/0\/access\/0: /),
        expect.stringMatching(/^\/permissions\/environment\/allow\/0\/key: /),
        '/resources/limits/memory: must be a size like 64Mi (Ki, Mi or Gi)',
        '/resources/limits/timeout: must be a duration like 5s (ms, s or m)',
      ]),
    );
  });

  it('enforces the platform maxima at their edges', () => {
    expect(problemsOf(`schema_version: "1.0"\nresources: { limits: { memory: ${MAX_MEMORY_BYTES / 1024 / 1024}Mi, timeout: 60s } }`)).toEqual([]);
    expect(problemsOf('schema_version: "1.0"\nresources: { limits: { memory: 513Mi } }')).toEqual(['/resources/limits/memory: at most 512Mi']);
    expect(problemsOf('schema_version: "1.0"\nresources: { limits: { timeout: 60001ms } }')).toEqual(['/resources/limits/timeout: at most 60s']);
  });

  it('refuses YAML that is not a mapping or not YAML at all', () => {
    expect(problemsOf('- a\n- b')).toEqual(['/: must be an object']);
    expect(problemsOf('schema_version: "1.0"\nschema_version: "1.0"')[0]).toMatch(/not valid YAML/);
    expect(problemsOf('a: [unclosed')[0]).toMatch(/not valid YAML/);
  });

  it('reads the archive .env', () => {
    expect(parsePluginEnv('API_TOKEN=abc\n# comment\nQUOTED="a b"\n')).toEqual({ API_TOKEN: 'abc', QUOTED: 'a b' });
  });
});
