import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sdkFetch } from '../helpers/a2a.ts';
import { ROOT, runCli, startServe } from '../helpers/cli.ts';

const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const quickstart = readme.slice(readme.indexOf('## Quickstart'), readme.indexOf('\n## ', readme.indexOf('## Quickstart') + 5));
/** The shell lines of the quickstart, in order, as a newcomer copies them. */
const lines = [...quickstart.matchAll(/```sh\n([\s\S]*?)```/g)].flatMap((m) => m[1]!.split('\n').filter((l) => l.trim() !== ''));

/** Splits a command line as a POSIX shell would for these commands (words, double-quoted strings). */
const words = (line: string) => [...line.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2]!);

/**
 * The README's quickstart, copied and pasted: `npm start` on an empty data directory (here on a free port: the CLI must
 * find it by itself), then every command of the quickstart's blocks in order, with the secrets the start printed where
 * the README says to paste them; the MCP Inspector step is done with the official MCP client, with the URL, header and
 * call the README names.
 */
describe('the README quickstart runs as written', () => {
  const work = mkdtempSync(path.join(os.tmpdir(), 'quickstart-'));
  const base = { PLATFORM_DATA_DIR: path.join(work, '.platform'), PLATFORM_CONFIG_DIR: path.join(work, 'config'), PLATFORM_SEED_DEMO: 'true' };
  let server: Awaited<ReturnType<typeof startServe>>;
  const secrets: Record<string, string> = {};
  beforeAll(async () => {
    server = await startServe(base);
    secrets['user API key'] = /user API key\s+(ak-\S+)/.exec(server.banner)![1]!;
    secrets['service API key'] = /service API key\s+(ak-\S+)/.exec(server.banner)![1]!;
  }, 120_000);
  afterAll(async () => {
    server?.child.kill('SIGTERM');
    await server?.stopped;
    rmSync(work, { recursive: true, force: true });
  });

  async function gateway<T>(fn: (c: Client) => Promise<T>): Promise<T> {
    const url = /the URL `(http:\/\/mcp-demo\.localhost:8080\/)`/.exec(quickstart)![1]!.replace(':8080', `:${server.port}`);
    const header = /the header\s+`Authorization` with the value `Bearer <the (service API key)>`/.exec(quickstart)!;
    const client = new Client({ name: 'quickstart', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { fetch: sdkFetch(secrets[header[1]!]!) }));
    try {
      return await fn(client);
    } finally {
      await client.close();
    }
  }
  const text = (r: unknown) => (r as { content: { text: string }[] }).content.map((c) => c.text).join('');

  it('every step answers what the README says', { timeout: 600_000 }, async () => {
    expect(lines.length).toBeGreaterThanOrEqual(6);
    const env: Record<string, string> = { ...base };
    const outputs: Record<string, string> = {};
    for (const line of lines) {
      const exported = /^export (\w+)=<the (.+) npm start printed>$/.exec(line);
      if (exported) {
        expect(secrets[exported[2]!], line).toBeDefined();
        env[exported[1]!] = secrets[exported[2]!]!;
        continue;
      }
      const [program, ...args] = words(line);
      expect(program, line).toBe('bin/platform');
      const r = await runCli(args, env, { cwd: work, timeoutMs: 300_000 });
      expect(r.code, `${line}\n${r.stderr}`).toBe(0);
      expect(r.stderr).not.toMatch(/^\s+at /m);
      outputs[args.slice(0, 2).join(' ')] = r.stdout;
    }
    // The CLI found the node on its own port, and the key works there.
    expect(outputs['whoami']).toMatch(new RegExp(`api_url: http://api\\.localhost:${server.port}\\nvalid: true`));
    // Configuration for a client, naming the gateway's URL.
    expect(outputs['gateways show']).toContain(`http://mcp-demo.localhost:${server.port}`);
    // The agent called calc_add and answered.
    expect(outputs['agents send']).toContain('The sum is 42.');
    // Step 1 and the end of step 3 in the client: run_javascript answers 42, the new plugin's tools are listed.
    const call = /call `(run_javascript)`\s+with the code `([^`]+)`: it answers `(\d+)`/.exec(quickstart)!;
    const tools = await gateway(async (c) => {
      expect(text(await c.callTool({ name: call[1]!, arguments: { code: call[2]! } }))).toContain(call[3]!);
      return (await c.listTools()).tools.map((t) => t.name);
    });
    const listed = /`([a-z_]+)` and `([a-z_]+)` are there/.exec(quickstart)!;
    expect(tools, tools.join(' ')).toEqual(expect.arrayContaining([listed[1]!, listed[2]!, call[1]!, 'calc_add']));
  });
});
