import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { request as undiciRequest } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintAgentToken, workspaceAnchor } from '../../runtime/index.ts';
import { a2aCall, bearer, request } from '../helpers/a2a.ts';
import { rulesFile, userMessage } from '../helpers/agents.ts';
import { demoUser } from '../helpers/identity.ts';
import { png } from '../helpers/images.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

const QUOTA = 1024 * 1024;

/** Attachments, files, agents' home directories and identity links on the management API (spec §1). */
describe('attachments, files, agent homes and identity links', () => {
  let p: TestPlatform;
  let accountId: string;
  let agentId: string;
  const keys: Record<'owner' | 'member' | 'other' | 'service' | 'stranger', string> = { owner: '', member: '', other: '', service: '', stranger: '' };
  const ids: Record<'owner' | 'member', string> = { owner: '', member: '' };
  let memberToken: string;
  const as = (who: keyof typeof keys) => ({ authorization: `Bearer ${keys[who]}` });
  const get = (url: string, who: keyof typeof keys = 'owner') => p.call('GET', url, { headers: as(who) });
  const post = (url: string, json: unknown, who: keyof typeof keys = 'owner') => p.call('POST', url, { headers: as(who), json });
  const sendFile = (bytes: Buffer, name = 'f.bin', mediaType = 'application/octet-stream') =>
    a2aCall(p, request('SendMessage', { message: userMessage('echo ok', { parts: [{ text: 'echo ok' }, { raw: bytes.toString('base64'), filename: name, mediaType }] }) }), { headers: bearer(memberToken) });

  beforeAll(async () => {
    p = await startTestPlatform({ env: { PLATFORM_SCRIPTED_RULES: await rulesFile(), PLATFORM_ATTACHMENT_QUOTA_BYTES: String(QUOTA) } });
    const { admin, store, agentTokens } = p.node.services;
    accountId = p.node.demo!.accountId;
    agentId = (await store.agents.byHandle('demo'))!.id;
    ids.owner = (await demoUser(p)).userId;
    keys.owner = (await admin.createKey({ principal: ids.owner })).key;
    const member = await admin.createUser({ account: accountId, email: 'files-member@example.test', password: 'member-password', role: 'member' });
    ids.member = member.id;
    keys.member = (await admin.createKey({ principal: member.id })).key;
    const other = await admin.createUser({ account: accountId, email: 'files-other@example.test', password: 'other-password', role: 'member' });
    keys.other = (await admin.createKey({ principal: other.id })).key;
    keys.service = p.node.demo!.serviceKey;
    const elsewhere = await admin.createAccount({ name: 'elsewhere' });
    const stranger = await admin.createUser({ account: elsewhere.id, email: 'stranger@example.test', password: 'stranger-password', role: 'owner' });
    keys.stranger = (await admin.createKey({ principal: stranger.id })).key;
    memberToken = (await mintAgentToken({ store, tokens: agentTokens }, { accountId, agentId, subject: member.id, actors: [] })).token;
  });
  afterAll(() => p.close());

  it('[SURF-18] [SURF-23] an attachment is listed and read by its sender and the owner only; GET /v1/files/{id} redirects to a presigned URL that serves the bytes as a download', async () => {
    const image = png(32, 16);
    const sent = await sendFile(image, 'pic.png', 'image/png');
    expect(sent.json.error).toBeUndefined();
    const list = await get('/v1/attachments', 'member');
    expect(list.status).toBe(200);
    const a = list.json.data.attachments[0];
    expect(a).toMatchObject({ agent_id: agentId, owner_id: ids.member, part: 1, kind: 'raw', filename: 'pic.png', media_type: 'image/png', size: image.length, width: 32, height: 16 });
    expect((await get('/v1/attachments', 'owner')).json.data.attachments.map((x: any) => x.id)).toContain(a.id);
    expect((await get('/v1/attachments', 'other')).json.data.attachments).toEqual([]);
    for (const who of ['other', 'stranger'] as const) {
      const hidden = await get(`/v1/attachments/${a.id}`, who);
      expect([hidden.status, hidden.json.code]).toEqual([404, 'MGMT_ATTACHMENT_NOT_FOUND']);
      expect((await get(`/v1/files/${a.id}`, who)).status).toBe(404);
    }
    expect((await get(`/v1/attachments/not-a-uuid`)).json.code).toBe('MGMT_ATTACHMENT_NOT_FOUND');
    expect((await get(`/v1/attachments?task_id=${a.task_id}`, 'member')).json.data.attachments.map((x: any) => x.id)).toEqual([a.id]);
    // A cursor this server never issued (here: a well-formed one naming a row id that is no UUID) is the caller's 400.
    const forged = Buffer.from(JSON.stringify(['2026-01-01T00:00:00.000Z', 'x'])).toString('base64url');
    expect((await get(`/v1/attachments?cursor=${forged}`)).json.code).toBe('MGMT_INVALID_QUERY');

    const redirect = await get(`/v1/files/${a.id}`, 'member');
    expect(redirect.status).toBe(302);
    const location = new URL(redirect.headers.location as string);
    expect(location.pathname).toBe(`/v1/files/${a.id}/content`);
    // The presigned URL needs no credential: fetched bare, it serves the bytes as a download.
    const bytes = await p.call('GET', `${location.pathname}${location.search}`);
    expect(bytes.status).toBe(200);
    expect(bytes.headers['content-type']).toBe('image/png');
    expect(bytes.headers['content-disposition']).toBe(`attachment; filename="pic.png"; filename*=UTF-8''pic.png`);
    expect(bytes.headers['x-content-type-options']).toBe('nosniff');
    const raw = await undiciRequest(`${p.url}${location.pathname}${location.search}`, { headers: { host: `api.${p.config.domain}` } });
    expect(Buffer.from(await raw.body.arrayBuffer())).toEqual(image);
    // Any change to the URL breaks it; so does the credential-less route without a signature.
    const tampered = new URLSearchParams(location.search);
    tampered.set('expires', String(Number(tampered.get('expires')) + 3600));
    const bad = await p.call('GET', `${location.pathname}?${tampered}`);
    expect([bad.status, bad.json.code, bad.json.category]).toEqual([403, 'MGMT_FILE_LINK_INVALID', 'permission']);
    expect((await p.call('GET', `${location.pathname}`)).json.code).toBe('MGMT_FILE_LINK_INVALID');
    expect((await p.call('GET', `/v1/files/${a.id}`)).json.code).toBe('MGMT_CREDENTIAL_MISSING');
  });

  it('[SURF-18] regenerates a presigned URL with the lifetime asked for, 60 s to 7 days; an expired URL is refused', async () => {
    const a = (await get('/v1/attachments', 'member')).json.data.attachments[0];
    const now = Math.floor(Date.now() / 1000);
    for (const [expires_in, status] of [[59, 400], [60, 200], [604800, 200], [604801, 400]] as const) {
      const r = await post(`/v1/attachments/${a.id}/url`, { expires_in }, 'member');
      expect(r.status).toBe(status);
      if (status === 200) {
        expect(Math.abs(Date.parse(r.json.data.expires_at) / 1000 - (now + expires_in))).toBeLessThan(5);
        expect(new URL(r.json.data.url).searchParams.get('account_id')).toBe(accountId);
      } else expect(r.json.code).toBe('MGMT_INVALID_BODY');
    }
    const dflt = await post(`/v1/attachments/${a.id}/url`, {}, 'member');
    expect(Math.abs(Date.parse(dflt.json.data.expires_at) / 1000 - (now + 3600))).toBeLessThan(5);
    expect((await post(`/v1/attachments/${a.id}/url`, {}, 'other')).status).toBe(404);
    // A link signed for a moment already past: the signature is right, the time is not.
    const past = p.node.services.fileLinks.sign(accountId, a.id, -1);
    const old = await p.call('GET', new URL(past.url).pathname + new URL(past.url).search);
    expect([old.status, old.json.message]).toEqual([403, 'the file link has expired; ask for a new one']);
  });

  it('[SURF-18] the account quota: read it; a message that fits exactly is taken, one byte more is -32602 before anything runs', async () => {
    const quota = await get('/v1/attachments/quota', 'member');
    expect(quota.status).toBe(200);
    const used = quota.json.data.used_bytes;
    expect(quota.json.data).toEqual({ used_bytes: used, limit_bytes: QUOTA, files: expect.any(Number), max_file_bytes: 20 * 1024 * 1024 });
    const over = await sendFile(Buffer.alloc(QUOTA - used + 1, 7));
    expect(over.json.error).toMatchObject({ code: -32602, data: expect.arrayContaining([expect.objectContaining({ metadata: expect.objectContaining({ code: 'A2A_ATTACHMENT_QUOTA_EXCEEDED' }) })]) });
    expect((await get('/v1/attachments/quota')).json.data.used_bytes).toBe(used);
    const fits = await sendFile(Buffer.alloc(QUOTA - used, 8));
    expect(fits.json.error).toBeUndefined();
    expect((await get('/v1/attachments/quota')).json.data.used_bytes).toBe(QUOTA);
    expect((await sendFile(Buffer.alloc(1, 9))).json.error.code).toBe(-32602);
    // Another account's quota is its own.
    expect((await get('/v1/attachments/quota', 'stranger')).json.data).toMatchObject({ used_bytes: 0, files: 0 });
  });

  it("[SURF-16] browses and reads the agent's home directory of the caller (an owner may name another principal's); paths cannot leave it", async () => {
    const home = path.join(p.config.workspacesDir, accountId, ...workspaceAnchor('agent', agentId, ids.member).split('/'));
    expect((await get(`/v1/agents/${agentId}/files`, 'member')).json.data).toEqual({ principal_id: ids.member, path: '.', entries: [], truncated: false });
    await mkdir(path.join(home, 'notes'), { recursive: true });
    await writeFile(path.join(home, 'notes', 'a.txt'), 'hello');
    await writeFile(path.join(home, 'top.md'), '# top');
    await symlink('/etc/passwd', path.join(home, 'escape'));
    const root = await get(`/v1/agents/${agentId}/files`, 'member');
    expect(root.status).toBe(200);
    expect(root.json.data.entries.map((e: any) => [e.name, e.type, e.size])).toEqual([['notes', 'directory', 0], ['top.md', 'file', 5]]);
    expect((await get(`/v1/agents/${agentId}/files?path=notes`, 'member')).json.data.entries.map((e: any) => e.name)).toEqual(['a.txt']);
    const file = await get(`/v1/agents/${agentId}/files/content?path=notes/a.txt`, 'member');
    expect([file.status, file.text, file.headers['content-type'], file.headers['content-disposition']]).toEqual([200, 'hello', 'application/octet-stream', "attachment; filename*=UTF-8''a.txt"]);
    for (const [bad, code] of [['../x', 'MGMT_HOME_PATH_INVALID'], ['/etc', 'MGMT_HOME_PATH_INVALID'], ['escape', 'MGMT_HOME_PATH_INVALID'], ['nope.txt', 'MGMT_HOME_PATH_NOT_FOUND']] as const) {
      const r = await get(`/v1/agents/${agentId}/files/content?path=${encodeURIComponent(bad)}`, 'member');
      expect([r.json.code, r.status]).toEqual([code, code === 'MGMT_HOME_PATH_INVALID' ? 400 : 404]);
    }
    // Paths are at most 1024 characters: at the limit the path is looked up, one more is refused.
    expect((await get(`/v1/agents/${agentId}/files?path=${'a'.repeat(1024)}`, 'member')).json.code).toBe('MGMT_HOME_PATH_NOT_FOUND');
    expect((await get(`/v1/agents/${agentId}/files?path=${'a'.repeat(1025)}`, 'member')).json.code).toBe('MGMT_INVALID_QUERY');
    // Another user sees their own (empty) home; only an owner or admin may name the member's.
    expect((await get(`/v1/agents/${agentId}/files`, 'other')).json.data.entries).toEqual([]);
    const peek = await get(`/v1/agents/${agentId}/files?principal_id=${ids.member}`, 'other');
    expect([peek.status, peek.json.code]).toEqual([403, 'MGMT_FORBIDDEN']);
    expect((await get(`/v1/agents/${agentId}/files?principal_id=${ids.member}`, 'owner')).json.data.entries).toHaveLength(2);
    const quota = await get(`/v1/agents/${agentId}/quota`, 'member');
    expect(quota.json.data).toMatchObject({ principal_id: ids.member, used_bytes: 10, limit_bytes: 64 * 1024 * 1024, limit_entries: 10_000, max_file_bytes: 10 * 1024 * 1024 });
    // Agents of another account do not exist for this caller.
    const foreign = await get(`/v1/agents/${agentId}/files`, 'stranger');
    expect([foreign.status, foreign.json.code]).toEqual([404, 'MGMT_AGENT_NOT_FOUND']);
    expect((await get(`/v1/agents/not-an-id/quota`)).json.code).toBe('MGMT_AGENT_NOT_FOUND');
  });

  it('[SURF-22] links an outside identity: a service principal issues a code, the user verifies it once, the integration resolves the link', async () => {
    const code = await post('/v1/identity/link-codes', { provider: 'slack', external_id: 'U123', display_name: 'Member M.' }, 'service');
    expect(code.status).toBe(201);
    expect(code.json.data).toMatchObject({ provider: 'slack', external_id: 'U123', code: expect.stringMatching(/^[A-Z]{4}-[A-Z]{4}$/) });
    // Users do not issue codes; service principals do not verify them; a user of another account cannot redeem it.
    expect((await post('/v1/identity/link-codes', { provider: 'slack', external_id: 'U9' }, 'member')).json.code).toBe('MGMT_SERVICE_PRINCIPAL_REQUIRED');
    expect((await post('/v1/identity/verify', { code: code.json.data.code }, 'service')).json.code).toBe('MGMT_USER_REQUIRED');
    expect((await post('/v1/identity/verify', { code: code.json.data.code }, 'stranger')).json.code).toBe('MGMT_LINK_CODE_INVALID');
    // The stranger's attempt did not use it up (it is not theirs); case and separators do not matter.
    const linked = await post('/v1/identity/verify', { code: code.json.data.code.toLowerCase().replace('-', ' ') }, 'member');
    expect(linked.status).toBe(200);
    expect(linked.json.data).toMatchObject({ provider: 'slack', external_id: 'U123', principal_id: ids.member, display_name: 'Member M.' });
    const again = await post('/v1/identity/verify', { code: code.json.data.code }, 'member');
    expect([again.status, again.json.code]).toEqual([400, 'MGMT_LINK_CODE_INVALID']);
    expect((await get('/v1/identity/links?provider=slack&external_id=U123', 'service')).json.data.links.map((l: any) => l.principal_id)).toEqual([ids.member]);
    expect((await get('/v1/identity/links', 'member')).json.data.links).toHaveLength(1);
    expect((await get('/v1/identity/links?provider=slack&external_id=U123', 'other')).json.data.links).toEqual([]);
    for (const body of [{ provider: 'Slack', external_id: 'U1' }, { provider: 'slack', external_id: '' }, { provider: 'slack', external_id: 'x'.repeat(257) }]) {
      expect((await post('/v1/identity/link-codes', body, 'service')).json.code).toBe('MGMT_INVALID_BODY');
    }
    expect((await post('/v1/identity/link-codes', { provider: 'slack', external_id: 'x'.repeat(256) }, 'service')).status).toBe(201);
  });

  it('[SURF-18] [SURF-22] [SURF-23] the routes are in the OpenAPI document', async () => {
    const doc = (await p.call('GET', '/v1/openapi.json')).json;
    for (const [route, method] of [
      ['/v1/attachments', 'get'],
      ['/v1/attachments/quota', 'get'],
      ['/v1/attachments/{id}/url', 'post'],
      ['/v1/files/{id}', 'get'],
      ['/v1/files/{id}/content', 'get'],
      ['/v1/agents/{agent_id}/files', 'get'],
      ['/v1/agents/{agent_id}/files/content', 'get'],
      ['/v1/agents/{agent_id}/quota', 'get'],
      ['/v1/identity/verify', 'post'],
      ['/v1/identity/link-codes', 'post'],
      ['/v1/identity/links', 'get'],
    ]) expect(doc.paths[route!]?.[method!], `${method} ${route}`).toBeDefined();
  });
});
