import { randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { pack } from 'tar-stream';
import { FormData, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SKILL_LIMITS } from '../../runtime/index.ts';
import { bystanderTenant, whileBystanderWaits } from '../helpers/bystander.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

/** The worst a bystander's request may take while another tenant sends hostile skills and workflows. */
const BYSTANDER_MAX_MS = 100;

async function tarGz(files: Record<string, Buffer>): Promise<Buffer> {
  const p = pack();
  for (const [name, body] of Object.entries(files)) p.entry({ name }, body);
  p.finalize();
  const chunks: Buffer[] = [];
  for await (const c of p) chunks.push(c as Buffer);
  return gzipSync(Buffer.concat(chunks));
}

describe("a tenant's hostile skills stay off the node's thread", () => {
  let p: TestPlatform;
  let bystanderKey: string;
  const auth = () => ({ authorization: `Bearer ${p.node.demo!.userKey}` });
  const upload = async (bytes: Buffer) => {
    const form = new FormData();
    form.append('archive', new Blob([bytes]), 'skill.tar.gz');
    const res = await request(`${p.url}/v1/skills/import`, { method: 'POST', headers: { host: `api.${p.config.domain}`, ...auth() }, body: form });
    return { status: res.statusCode, json: (await res.body.json()) as { code?: string } };
  };

  beforeAll(async () => {
    p = await startTestPlatform({ compileAhead: true });
    bystanderKey = (await bystanderTenant(p)).key;
  }, 60_000);
  afterAll(() => p?.close());

  it('[SURF-12] gzip bombs, full bundles in JSON and front matter full of YAML aliases: another tenant\'s requests stay within 100 ms', { timeout: 120_000, retry: 2 }, async () => {
    // Names of their own per attempt: a retry must not meet the skills an earlier attempt made.
    const tag = Date.now().toString(36);
    const md = (name: string) => Buffer.from(`---\nname: ${name}-${tag}\ndescription: d\n---\nbody\n`);
    const bomb = await tarGz({ 'SKILL.md': md('bomb'), 'zeros.bin': Buffer.alloc(256 * 1024 * 1024) });
    const full = await tarGz({ 'SKILL.md': md('full'), ...Object.fromEntries(Array.from({ length: 63 }, (_, i) => [`f/${i}.bin`, randomBytes(Math.floor((SKILL_LIMITS.bundleBytes - 100) / 63))])) });
    const aliases = `---\nname: aliases\ndescription: d\na: &a [x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b]\nd: [*c, *c, *c, *c, *c, *c, *c, *c]\n---\n`;
    const json = { files: [{ path: 'SKILL.md', content: md('json').toString() }, ...Array.from({ length: 60 }, (_, i) => ({ path: `b/${i}.bin`, content_base64: randomBytes(8000).toString('base64') }))] };
    const { result, latencies, loopDelayMaxMs } = await whileBystanderWaits(p, bystanderKey, async () => {
      const out: unknown[] = [];
      for (let round = 0; round < 3; round++) {
        out.push((await upload(bomb)).json.code);
        out.push((await upload(full)).status);
        out.push((await p.call('POST', '/v1/skills', { headers: auth(), json: { files: [{ path: 'SKILL.md', content: aliases }] } })).json.code);
        out.push((await p.call('POST', '/v1/skills', { headers: auth(), json: { ...json, name: `json-${round}-${tag}` } })).status);
        // The full archive again next round: its skill goes first.
        const made = (await p.call('GET', `/v1/skills?search=full-${tag}`, { headers: auth() })).json.data.skills[0];
        if (made) await p.call('DELETE', `/v1/skills/${made.id}`, { headers: auth() });
      }
      return out;
    });
    expect(result.slice(0, 4)).toEqual(['SKILL_TOO_LARGE', 201, 'SKILL_INVALID', 201]);
    expect(latencies.length).toBeGreaterThan(3);
    expect(Math.max(...latencies), 'bystander worst latency').toBeLessThan(BYSTANDER_MAX_MS);
    expect(loopDelayMaxMs, 'event loop delay').toBeLessThan(BYSTANDER_MAX_MS);
  });
});
