import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { extract } from 'tar-stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sdkFetch } from '../helpers/a2a.ts';
import { ROOT, runCli } from '../helpers/cli.ts';
import { startCliNode } from '../helpers/cli-node.ts';

/** A line of a stack trace: no failure of these commands may print one. */
const STACK = /^\s+at /m;

/** Every entry of an .npack (a gzip-compressed tar), in archive order. */
function entriesOf(file: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const names: string[] = [];
    const ex = extract();
    ex.on('entry', (h, stream, next) => {
      names.push(h.name);
      stream.on('end', next);
      stream.resume();
    });
    ex.on('finish', () => resolve(names));
    ex.on('error', reject);
    ex.end(gunzipSync(readFileSync(file)));
  });
}

describe('platform plugins init, build, pack and deploy, against a running node, called from an MCP client', () => {
  let node: Awaited<ReturnType<typeof startCliNode>>;
  const work = mkdtempSync(path.join(os.tmpdir(), 'plugin-authoring-'));
  beforeAll(async () => {
    node = await startCliNode('platform-authoring-');
  }, 120_000);
  afterAll(async () => {
    await node?.close();
    rmSync(work, { recursive: true, force: true });
  });

  /** Calls tools of the demo gateway (which deploy binds to) with @modelcontextprotocol/client, as a user's client would. */
  async function withGateway<T>(fn: (client: Client) => Promise<T>): Promise<T> {
    const client = new Client({ name: 'plugin-authoring-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`http://mcp-demo.localhost:${node.server.port}/`), { fetch: sdkFetch(node.serviceKey) }));
    try {
      return await fn(client);
    } finally {
      await client.close();
    }
  }
  const text = (r: unknown) => (r as { content: { type: string; text: string }[] }).content.map((c) => c.text).join('');

  it('init --lang wat, build, then deploy --bind-gateway demo: progress on stderr, one JSON document on stdout, the tools answer', async () => {
    const dir = path.join(work, 'adder');
    const init = await runCli(['plugins', 'init', dir, '--lang', 'wat', '--json'], node.env);
    expect(init.code, init.stderr).toBe(0);
    expect(init.json).toEqual({ dir, name: 'adder', lang: 'wat', files: ['platform.yaml', 'wit/world.wit', 'src/plugin.wat', 'README.md', '.gitignore'] });

    const build = await runCli(['plugins', 'build', dir, '--json'], node.env);
    expect(build.code, build.stderr).toBe(0);
    expect(build.json).toMatchObject({
      component: path.join(dir, 'dist', 'adder.wasm'),
      language: 'wat',
      world: 'adder',
      tools: [
        { name: 'adder_add', description: 'Adds two whole numbers.' },
        { name: 'adder_clamp', description: 'Clamps a value to the range from low to high.' },
      ],
      warnings: [],
    });
    expect(readFileSync(path.join(dir, 'dist', 'adder.wasm')).subarray(0, 8)).toEqual(Buffer.from([0, 0x61, 0x73, 0x6d, 0x0d, 0, 1, 0]));

    const deploy = await runCli(['plugins', 'deploy', dir, '--bind-gateway', 'demo', '--json'], node.env, { timeoutMs: 120_000 });
    expect(deploy.code, deploy.stderr).toBe(0);
    expect(deploy.json).toMatchObject({ capability_name: 'adder', version: 1, status: 'active', files_processed: ['wasm', 'platform', 'wit'], archive: path.join(dir, 'dist', 'adder.npack'), bound: [{ kind: 'gateway', ref: 'demo', changed: true }] });
    expect(deploy.json.schema_warnings).toBeUndefined();
    expect(deploy.stderr).toMatch(/^building adder \(WAT with wasm-tools\), world adder\nbuilt .*adder\.wasm \(\d+ bytes\) in [\d.]+ s\npacked .*adder\.npack: platform\.yaml, dist\/adder\.wasm, wit\/world\.wit \(\d+ bytes\)\nuploading to http:\/\/api\.localhost:\d+\nuploaded adder version 1 \(capability [0-9a-f-]{36}\); activating\nversion 1 is active: adder_add, adder_clamp\nbound to gateway demo\n$/);

    await withGateway(async (client) => {
      const tools = (await client.listTools()).tools.filter((t) => t.name.startsWith('adder_'));
      expect(tools.map((t) => [t.name, t.description])).toEqual([
        ['adder_add', 'Adds two whole numbers.'],
        ['adder_clamp', 'Clamps a value to the range from low to high.'],
      ]);
      expect(text(await client.callTool({ name: 'adder_add', arguments: { a: 2, b: 40 } }))).toBe('42');
      expect(text(await client.callTool({ name: 'adder_clamp', arguments: { value: 99, low: 0, high: 10 } }))).toBe('10');
      expect(text(await client.callTool({ name: 'adder_clamp', arguments: { value: -5, low: 0, high: 10 } }))).toBe('0');
    });
  }, 180_000);

  it('[UPLOAD-18] pack keeps the wit/ layout: the archive holds platform.yaml, dist/<name>.wasm and wit/world.wit, and the server reads the WIT there', async () => {
    const dir = path.join(work, 'adder');
    const out = path.join(work, 'adder.npack');
    const packed = await runCli(['plugins', 'pack', dir, '--out', out, '--json'], node.env);
    expect(packed.code, packed.stderr).toBe(0);
    // The sources, README and .gitignore are not the server's: only what it reads is packed.
    expect(await entriesOf(out)).toEqual(['platform.yaml', 'dist/adder.wasm', 'wit/world.wit']);
    const up = await runCli(['plugins', 'upload', out, '--json'], node.env);
    expect(up.code, up.stderr).toBe(0);
    // `wit` processed and no "no description" warning: the descriptions came from wit/world.wit.
    expect(up.json).toMatchObject({ capability_name: 'adder', version: 2, files_processed: ['wasm', 'platform', 'wit'], status: 'active' });
    expect(up.json.schema_warnings).toBeUndefined();

    // A source edited after the build: pack still packs the last build, and says so.
    writeFileSync(path.join(dir, 'src', 'plugin.wat'), `${readFileSync(path.join(dir, 'src', 'plugin.wat'), 'utf8')}\n`);
    const stale = await runCli(['plugins', 'pack', dir, '--out', out], node.env);
    expect(stale.code).toBe(0);
    expect(stale.stderr).toBe(`warning: ${path.join(dir, 'src', 'plugin.wat')} changed after ${path.join(dir, 'dist', 'adder.wasm')} was built: run \`platform plugins build\` to include it\n`);
  }, 60_000);

  it('init --lang js, then deploy: componentize-js builds it here, offline, and its tools answer', async () => {
    const dir = path.join(work, 'js-plugin');
    expect((await runCli(['plugins', 'init', dir, '--lang', 'js', '--name', 'greeter'], node.env)).code).toBe(0);
    const deploy = await runCli(['plugins', 'deploy', dir, '--bind-gateway', 'demo'], node.env, { timeoutMs: 240_000 });
    expect(deploy.code, deploy.stderr).toBe(0);
    expect(deploy.stdout).toMatch(/^greeter version 1 is active \(capability [0-9a-f-]{36}\)\n {2}greeter_greet {7}Greets someone by name\.\n {2}greeter_word_count {2}Counts the words in a text: runs of characters between spaces\.\nbound to gateway demo\n$/);
    expect(deploy.stderr).toMatch(/^building greeter \(JavaScript with componentize-js, 10-30 s\), world greeter\n/);
    await withGateway(async (client) => {
      expect(text(await client.callTool({ name: 'greeter_greet', arguments: { name: 'Ada' } }))).toBe('Hello, Ada!');
      expect(text(await client.callTool({ name: 'greeter_word_count', arguments: { text: 'one  two\nthree ' } }))).toBe('3');
    });
  }, 300_000);

  it('examples/wat-math and examples/js-text-tools build and deploy, and their tools answer', async () => {
    const deployed: Record<string, string> = {};
    for (const example of ['wat-math', 'js-text-tools']) {
      // A copy, so that the test writes no dist/ into the repository.
      const dir = path.join(work, example);
      cpSync(path.join(ROOT, 'examples', example), dir, { recursive: true, filter: (src) => !src.split(path.sep).includes('dist') });
      const deploy = await runCli(['plugins', 'deploy', dir, '--bind-gateway', 'demo', '--json'], node.env, { timeoutMs: 240_000 });
      expect(deploy.code, deploy.stderr).toBe(0);
      expect(deploy.json.status).toBe('active');
      expect(deploy.json.schema_warnings).toBeUndefined();
      deployed[example] = deploy.json.capability_name;
    }
    expect(deployed).toEqual({ 'wat-math': 'wat-math', 'js-text-tools': 'text-tools' });
    await withGateway(async (client) => {
      expect(text(await client.callTool({ name: 'wat_math_gcd', arguments: { a: 84, b: 36 } }))).toBe('12');
      expect(text(await client.callTool({ name: 'wat_math_is_prime', arguments: { n: 97 } }))).toBe('true');
      expect(text(await client.callTool({ name: 'wat_math_is_prime', arguments: { n: 91 } }))).toBe('false');
      // Strings reach the hand-written module through its cabi_realloc, call after call.
      expect(text(await client.callTool({ name: 'wat_math_count_vowels', arguments: { text: 'Hello, WebAssembly' } }))).toBe('5');
      expect(text(await client.callTool({ name: 'wat_math_count_vowels', arguments: { text: 'AEIOU aeiou xyz'.repeat(5000) } }))).toBe('50000');
      expect(text(await client.callTool({ name: 'text_tools_slugify', arguments: { title: 'Crème brûlée, à la Mode!' } }))).toBe('creme-brulee-a-la-mode');
      const stats = await client.callTool({ name: 'text_tools_stats', arguments: { text: 'One two three. Four five!' } });
      expect(stats.structuredContent).toEqual({ words: 5, sentences: 2, characters: 25, 'reading-seconds': 1 });
      const links = await client.callTool({ name: 'text_tools_extract_links', arguments: { text: 'See https://example.com/a, then http://x.test/b?c=1. Again: https://example.com/a' } });
      expect(JSON.parse(text(links))).toEqual(['https://example.com/a', 'http://x.test/b?c=1']);
    });
  }, 300_000);

  it('refuses init into a non-empty folder, a build without wit/, a JS syntax error and a binding without an operator, and names the active version when a binding fails: exit 1, the reason, no stack trace', async () => {
    const full = path.join(work, 'full');
    mkdirSync(full);
    writeFileSync(path.join(full, 'notes.txt'), 'mine');
    const init = await runCli(['plugins', 'init', full, '--lang', 'js'], node.env);
    expect([init.code, init.stderr]).toEqual([1, `error: ${full} is not empty: init writes a new plugin into a new or empty folder\n`]);
    expect(readFileSync(path.join(full, 'notes.txt'), 'utf8')).toBe('mine');

    const nowit = path.join(work, 'nowit');
    expect((await runCli(['plugins', 'init', nowit, '--lang', 'wat'], node.env)).code).toBe(0);
    rmSync(path.join(nowit, 'wit'), { recursive: true });
    const build = await runCli(['plugins', 'build', nowit], node.env);
    expect([build.code, build.stderr]).toEqual([1, `error: ${nowit} has no wit/ folder: put the world the plugin implements in wit/<world>.wit (\`platform plugins init\` writes one)\n`]);

    const broken = path.join(work, 'broken');
    expect((await runCli(['plugins', 'init', broken, '--lang', 'js'], node.env)).code).toBe(0);
    writeFileSync(path.join(broken, 'src', 'plugin.js'), 'export function greet(name) {\n  return name;\n\nexport function wordCount(text) {\n  return 0;\n}\n');
    const syntax = await runCli(['plugins', 'build', broken, '--json'], node.env);
    expect(syntax.code).toBe(1);
    expect(syntax.stderr).toBe(
      `building broken (JavaScript with componentize-js, 10-30 s), world broken\nerror: ${path.join(broken, 'src', 'plugin.js')}:4: SyntaxError: Unexpected token 'export'\n  export function wordCount(text) {\n  ^^^^^^\n`,
    );
    expect(syntax.json).toEqual({ error: { code: 'BUILD_FAILED', message: expect.stringContaining("plugin.js:4: SyntaxError: Unexpected token 'export'") } });
    expect(existsSync(path.join(broken, 'dist'))).toBe(false);

    // Binding is an operator command: with no node on this data directory, deploy says so before it builds or uploads.
    const before = (await runCli(['plugins', 'list', '--json'], node.env)).json.length;
    const elsewhere = mkdtempSync(path.join(work, 'data-'));
    const bind = await runCli(['plugins', 'deploy', nowit, '--bind-agent', 'someone'], { ...node.env, PLATFORM_DATA_DIR: elsewhere });
    expect(bind.code).toBe(1);
    expect(bind.stderr).toMatch(/^error: --bind-agent needs the operator: binding is an operator command \(the management API has none\), and no node runs on this machine's data directory .*`platform admin agent bind --agent someone --capability <capability-id>`\n$/);
    expect((await runCli(['plugins', 'list', '--json'], node.env)).json.length).toBe(before);

    // A binding that fails after the upload: the version is active, and the message says which one.
    const missing = await runCli(['plugins', 'deploy', path.join(work, 'adder'), '--bind-gateway', 'no-such-gateway', '--json'], node.env, { timeoutMs: 120_000 });
    expect(missing.code).toBe(1);
    expect(missing.json.error).toMatchObject({ code: 'BIND_FAILED', message: expect.stringMatching(/^adder version 3 is active \(capability [0-9a-f-]{36}\), but binding it to gateway no-such-gateway failed: .*no-such-gateway/) });

    for (const r of [init, build, syntax, bind, missing]) expect(r.stderr).not.toMatch(STACK);
  }, 180_000);

  it('usage mistakes exit 2', async () => {
    const noDir = await runCli(['plugins', 'init', '--lang', 'js'], node.env);
    expect(noDir.code).toBe(2);
    expect(noDir.stderr).toContain('usage: platform plugins init <dir> --lang js|wat [--name n]');
    const lang = await runCli(['plugins', 'init', path.join(work, 'rusty'), '--lang', 'rust'], node.env);
    expect(lang.code).toBe(2);
    expect(lang.stderr).toContain('--lang must be js or wat');
    expect(existsSync(path.join(work, 'rusty'))).toBe(false);
    const name = await runCli(['plugins', 'init', path.join(work, 'Bad_Name'), '--lang', 'wat'], node.env);
    expect(name.code).toBe(2);
    expect(name.stderr).toContain('"bad_name" is not a plugin name');
    const verb = await runCli(['plugins', 'publish'], node.env);
    expect(verb.code).toBe(2);
    expect(verb.stderr).toContain('  platform plugins deploy [<dir>]');
  });
});
