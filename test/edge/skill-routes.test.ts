import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { pack } from 'tar-stream';
import { request as undiciRequest } from 'undici';
import { multipartBody } from '../../bin/cli/http.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { a2aCall, bearer, request } from '../helpers/a2a.ts';
import { AGENT_TEST_RULES, recordingModel, rulesFile, userMessage } from '../helpers/agents.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

const SKILL_MD = (name: string, description = 'Writes release notes from a list of changes.') => `---\nname: ${name}\ndescription: ${description}\n---\n\n# ${name}\n\n1. Group the changes.\n2. Write one line each.\n`;

/** A .tar.gz of `files` (paths as given). */
async function tarGz(files: Record<string, string | Buffer>): Promise<Buffer> {
  const p = pack();
  for (const [name, content] of Object.entries(files)) p.entry({ name }, typeof content === 'string' ? Buffer.from(content) : content);
  p.finalize();
  const chunks: Buffer[] = [];
  for await (const c of p) chunks.push(c as Buffer);
  return gzipSync(Buffer.concat(chunks));
}

const RULES = `${AGENT_TEST_RULES.replace('rules:\n', `rules:
  - when: { after_tool: read_skill }
    reply: "I read: {{result}}"
  - when: { contains: draft the instructions of a skill named }
    reply: "Steps for: {{after:Purpose:}}"
  - when: { contains: use the skill, tool: read_skill }
    call: { tool: read_skill, arguments: { skill: "{{after:use the skill }}" } }
`)}`;

/** Skills on the management API (spec §1): CRUD, content, bindings, import, generate, and what a bound skill does to an agent. */
describe('skills', () => {
  let p: TestPlatform;
  let model: Awaited<ReturnType<typeof recordingModel>>;
  let files: Server;
  let filesUrl: string;
  let agentId: string;
  let demoAgentId: string;
  const keys: Record<'owner' | 'member' | 'stranger', string> = { owner: '', member: '', stranger: '' };
  const as = (who: keyof typeof keys) => ({ authorization: `Bearer ${keys[who]}` });
  const api = (method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE', url: string, json?: unknown, who: keyof typeof keys = 'owner') => p.call(method, url, { headers: as(who), ...(json !== undefined ? { json } : {}) });
  const create = (name: string, extra: Record<string, unknown> = {}) => api('POST', '/v1/skills', { files: [{ path: 'SKILL.md', content: SKILL_MD(name) }], ...extra });
  const upload = async (bytes: Buffer, fields: Record<string, string> = {}, filename = 'skill.tar.gz') => {
    const form = multipartBody(fields, { field: 'archive', filename, bytes });
    const res = await undiciRequest(`${p.url}/v1/skills/import`, { method: 'POST', headers: { host: `api.${p.config.domain}`, ...as('owner'), 'content-type': form.contentType }, body: form.body });
    return { status: res.statusCode, json: (await res.body.json()) as any };
  };

  beforeAll(async () => {
    model = await recordingModel(RULES);
    files = createServer((req, res) => {
      if (req.url === '/skill.tar.gz') void tarGz({ 'fetched/SKILL.md': SKILL_MD('fetched'), 'fetched/ref.md': 'reference' }).then((b) => res.end(b));
      else if (req.url === '/SKILL.md') res.end(SKILL_MD('lone-fetched'));
      else res.writeHead(404).end('no');
    });
    await new Promise<void>((r) => files.listen(0, '127.0.0.1', r));
    filesUrl = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
    p = await startTestPlatform({ env: { PLATFORM_SCRIPTED_RULES: await rulesFile(RULES), PLATFORM_MODEL_PROVIDERS: `rec=${model.baseUrl}`, PLATFORM_EGRESS_ALLOW_LOOPBACK: 'true' } });
    const { admin, store } = p.node.services;
    const account = p.node.demo!.accountId;
    agentId = (await admin.createAgent({ account, handle: 'skilled', name: 'Skilled', instructions: 'Be terse.', model: 'rec/demo' })).id;
    demoAgentId = (await store.agents.byHandle('demo'))!.id;
    keys.owner = p.node.demo!.userKey;
    const member = await admin.createUser({ account, email: 'skills-member@example.test', password: 'member-password', role: 'member' });
    keys.member = (await admin.createKey({ principal: member.id })).key;
    const elsewhere = await admin.createAccount({ name: 'elsewhere' });
    const stranger = await admin.createUser({ account: elsewhere.id, email: 'skills-stranger@example.test', password: 'stranger-password', role: 'owner' });
    keys.stranger = (await admin.createKey({ principal: stranger.id })).key;
  });
  afterAll(async () => {
    await p.close();
    await model.close();
    await new Promise((r) => files.close(r));
  });

  it('[SURF-12] creates, lists, reads, updates and deletes a skill; names are unique per account; members read, admins and owners write', async () => {
    const made = await create('release-notes');
    expect(made.status).toBe(201);
    const s = made.json.data;
    expect(s).toMatchObject({ name: 'release-notes', description: 'Writes release notes from a list of changes.', version: 1, source: 'api', files: [{ path: 'SKILL.md', size: Buffer.byteLength(SKILL_MD('release-notes')) }] });
    const dup = await create('release-notes');
    expect([dup.status, dup.json.code]).toEqual([409, 'SKILL_NAME_TAKEN']);
    expect((await api('GET', '/v1/skills?search=RELEASE', undefined, 'member')).json.data).toMatchObject({ total: 1, skills: [{ id: s.id }] });
    expect((await api('GET', `/v1/skills/${s.id}`, undefined, 'member')).json.data.id).toBe(s.id);
    const denied = await create('by-member', {});
    expect(denied.status).toBe(201);
    const memberWrite = await api('POST', '/v1/skills', { files: [{ path: 'SKILL.md', content: SKILL_MD('nope') }] }, 'member');
    expect([memberWrite.status, memberWrite.json.code]).toEqual([403, 'MGMT_FORBIDDEN']);
    const hidden = await api('GET', `/v1/skills/${s.id}`, undefined, 'stranger');
    expect([hidden.status, hidden.json.code]).toEqual([404, 'SKILL_NOT_FOUND']);
    expect((await api('GET', '/v1/skills', undefined, 'stranger')).json.data.total).toBe(0);

    const patched = await api('PATCH', `/v1/skills/${s.id}`, { description: 'Release notes, grouped.' });
    expect(patched.json.data).toMatchObject({ version: 2, description: 'Release notes, grouped.', name: 'release-notes' });
    expect((await api('PATCH', `/v1/skills/${s.id}`, { name: 'by-member' })).json.code).toBe('SKILL_NAME_TAKEN');
    const replaced = await api('PUT', `/v1/skills/${s.id}/content`, { files: [{ path: 'SKILL.md', content: SKILL_MD('release-notes', 'Changed by its front matter.') }, { path: 'templates/line.txt', content_base64: Buffer.from([0xff, 0x00, 0x01]).toString('base64') }] });
    expect(replaced.json.data).toMatchObject({ version: 3, description: 'Changed by its front matter.', files: [{ path: 'SKILL.md' }, { path: 'templates/line.txt', size: 3 }] });
    const content = (await api('GET', `/v1/skills/${s.id}/content`, undefined, 'member')).json.data.files;
    expect(content).toEqual([
      { path: 'SKILL.md', size: expect.any(Number), content: SKILL_MD('release-notes', 'Changed by its front matter.') },
      { path: 'templates/line.txt', size: 3, content_base64: '/wAB' },
    ]);
    const gone = await api('DELETE', `/v1/skills/${denied.json.data.id}`);
    expect(gone.status).toBe(204);
    expect((await api('GET', `/v1/skills/${denied.json.data.id}`)).status).toBe(404);
    expect((await api('DELETE', `/v1/skills/${denied.json.data.id}`)).json.code).toBe('SKILL_NOT_FOUND');
  });

  it('[SURF-12] refuses bundles that are not skills, and holds the limits at both edges', async () => {
    const bad = async (body: unknown, code: string, status = 400) => {
      const r = await api('POST', '/v1/skills', body);
      expect([r.status, r.json.code], JSON.stringify(body).slice(0, 120)).toEqual([status, code]);
      return r;
    };
    await bad({ files: [{ path: 'README.md', content: 'x' }] }, 'SKILL_INVALID');
    await bad({ files: [{ path: 'SKILL.md', content: '# no front matter' }] }, 'SKILL_INVALID');
    expect((await api('POST', '/v1/skills', { name: 'given-name', description: 'Given.', files: [{ path: 'SKILL.md', content: '# no front matter' }] })).status).toBe(201);
    await bad({ files: [{ path: 'SKILL.md', content: '---\nname: [unclosed\n---\n' }] }, 'SKILL_INVALID');
    await bad({ files: [{ path: 'SKILL.md', content: SKILL_MD('Bad_Name') }] }, 'SKILL_INVALID');
    await bad({ files: [{ path: 'SKILL.md', content: SKILL_MD('paths') }, { path: '../escape', content: 'x' }] }, 'SKILL_INVALID');
    await bad({ files: [{ path: 'SKILL.md', content: SKILL_MD('paths') }, { path: 'a/./b', content: 'x' }] }, 'SKILL_INVALID');
    await bad({ files: [{ path: 'SKILL.md', content: SKILL_MD('both'), content_base64: 'eA==' }] }, 'MGMT_INVALID_BODY');
    // 512 KiB of files together: exactly at the limit is a skill, one byte more is 413.
    const md = SKILL_MD('big');
    const filler = (n: number) => [{ path: 'SKILL.md', content: md }, { path: 'data.txt', content: 'x'.repeat(n) }];
    expect((await api('POST', '/v1/skills', { files: filler(512 * 1024 - Buffer.byteLength(md)) })).status).toBe(201);
    await bad({ name: 'big-two', files: filler(512 * 1024 - Buffer.byteLength(md) + 1) }, 'SKILL_TOO_LARGE', 413);
    // 64 files at most.
    const many = (n: number, name: string) => [{ path: 'SKILL.md', content: SKILL_MD(name) }, ...Array.from({ length: n - 1 }, (_, i) => ({ path: `f/${i}.txt`, content: 'x' }))];
    expect((await api('POST', '/v1/skills', { files: many(64, 'many') })).status).toBe(201);
    await bad({ files: many(65, 'too-many') }, 'MGMT_INVALID_BODY');
    // Names: 64 characters at most.
    expect((await create('a'.repeat(64))).status).toBe(201);
    await bad({ files: [{ path: 'SKILL.md', content: SKILL_MD('a'.repeat(65)) }] }, 'SKILL_INVALID');
  });

  it('[SURF-12] [SURF-24] a bound skill shapes the agent\'s instructions and is read on demand by the agent loop; unbinding takes it away', async () => {
    const s = (await create('greeting', { description: 'How to greet a customer.' })).json.data;
    const bound = await api('PUT', `/v1/skills/${s.id}/bindings/${agentId}`);
    expect(bound.json.data).toEqual({ skill_id: s.id, agent_id: agentId, changed: true });
    expect((await api('PUT', `/v1/skills/${s.id}/bindings/${agentId}`)).json.data.changed).toBe(false);
    expect((await api('GET', `/v1/agents/${agentId}/skills`, undefined, 'member')).json.data.skills.map((x: any) => x.name)).toEqual(['greeting']);
    expect((await api('GET', `/v1/skills/${s.id}/bindings`)).json.data.bindings.map((b: any) => b.agent_id)).toEqual([agentId]);
    expect((await api('GET', `/v1/agents/${agentId}/skills`, undefined, 'stranger')).json.code).toBe('MGMT_AGENT_NOT_FOUND');
    expect((await api('PUT', `/v1/skills/${s.id}/bindings/${agentId}`, undefined, 'member')).status).toBe(403);

    model.requests.length = 0;
    const res = await a2aCall(p, request('SendMessage', { message: userMessage('use the skill greeting') }), { handle: 'skilled', headers: bearer(p.node.demo!.serviceKey) });
    const task = res.json.result.task;
    expect(task.status.state).toBe('TASK_STATE_COMPLETED');
    expect(task.artifacts[0].parts[0].text).toMatch(/^I read: ---\nname: greeting\n/);
    const [first] = model.requests;
    expect(first!.messages[0]).toMatchObject({ role: 'system', content: expect.stringContaining('Be terse.\n\nYou have skills') });
    expect(first!.messages[0]!.content).toContain('- greeting: How to greet a customer.');
    expect((first!.tools as any[]).map((t) => t.function.name)).toContain('read_skill');

    const unbound = await api('DELETE', `/v1/skills/${s.id}/bindings/${agentId}`);
    expect(unbound.json.data.changed).toBe(true);
    model.requests.length = 0;
    await a2aCall(p, request('SendMessage', { message: userMessage('echo hi') }), { handle: 'skilled', headers: bearer(p.node.demo!.serviceKey) });
    expect(model.requests[0]!.messages[0]!.content).toBe('Be terse.');
    expect(((model.requests[0]!.tools ?? []) as any[]).map((t) => t.function.name)).not.toContain('read_skill');
  });

  it('[SURF-12] imports a skill from an uploaded archive (one top directory or the root, or a lone SKILL.md) and from a URL through egress', async () => {
    const a = await upload(await tarGz({ 'my-skill/SKILL.md': SKILL_MD('from-archive'), 'my-skill/docs/more.md': 'more' }));
    expect(a.status).toBe(201);
    expect(a.json.data).toMatchObject({ name: 'from-archive', source: 'import', files: [{ path: 'SKILL.md' }, { path: 'docs/more.md', size: 4 }] });
    const lone = await upload(Buffer.from(SKILL_MD('lone')), { description: 'Given on import.' }, 'SKILL.md');
    expect(lone.json.data).toMatchObject({ name: 'lone', description: 'Given on import.' });
    const none = await upload(await tarGz({ 'a/README.md': 'x', 'b/SKILL.md': SKILL_MD('two-tops') }));
    expect([none.status, none.json.code]).toEqual([400, 'SKILL_INVALID']);
    // A gzip bomb stops at the cap: 64 MiB of zeros compress to ~64 KiB.
    const bomb = await upload(await tarGz({ 'SKILL.md': SKILL_MD('bomb'), 'zeros.bin': Buffer.alloc(64 * 1024 * 1024) }));
    expect([bomb.status, bomb.json.code]).toEqual([413, 'SKILL_TOO_LARGE']);
    const fromUrl = await api('POST', '/v1/skills/import-url', { url: `${filesUrl}/skill.tar.gz` });
    expect(fromUrl.json.data).toMatchObject({ name: 'fetched', files: [{ path: 'SKILL.md' }, { path: 'ref.md' }] });
    expect((await api('POST', '/v1/skills/import-url', { url: `${filesUrl}/SKILL.md` })).json.data.name).toBe('lone-fetched');
    const missing = await api('POST', '/v1/skills/import-url', { url: `${filesUrl}/nothing` });
    expect([missing.status, missing.json.code, missing.json.message]).toEqual([400, 'SKILL_IMPORT_FAILED', 'the URL answered HTTP 404']);
    const privateAddress = await api('POST', '/v1/skills/import-url', { url: 'http://10.1.2.3/skill.tar.gz' });
    expect([privateAddress.status, privateAddress.json.code]).toEqual([400, 'SKILL_IMPORT_FAILED']);
  });

  it("[SURF-12] generates a skill with an agent's model: the draft is its instructions, the front matter the platform's", async () => {
    const g = await api('POST', '/v1/skills/generate', { agent_id: demoAgentId, name: 'triage', purpose: 'Sort incoming bug reports by severity.\nMore detail.' });
    expect(g.status).toBe(201);
    expect(g.json.data).toMatchObject({ name: 'triage', description: 'Sort incoming bug reports by severity.', source: 'generate' });
    const [md] = (await api('GET', `/v1/skills/${g.json.data.id}/content`)).json.data.files;
    expect(md.content).toMatch(/^---\nname: triage\ndescription: "Sort incoming bug reports by severity."\n---\n\nSteps for: Sort incoming bug reports by severity\.\nMore detail\.\n$/);
    expect((await api('POST', '/v1/skills/generate', { agent_id: demoAgentId, name: 'triage', purpose: 'again' })).json.code).toBe('SKILL_NAME_TAKEN');
    expect((await api('POST', '/v1/skills/generate', { agent_id: '00000000-0000-4000-8000-000000000000', name: 'x', purpose: 'y' })).json.code).toBe('MGMT_AGENT_NOT_FOUND');
  });
});
