import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workspaceAnchor } from '../../runtime/index.ts';
import { call, userMessage } from '../helpers/agents.ts';
import { runCli } from '../helpers/cli.ts';
import { demoUser } from '../helpers/identity.ts';
import { callerOf } from '../helpers/mcp.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

/** The CLI over attachments, files, an agent's home and identity links: each with `--json`. */
describe('platform attachments, files, agents files|cat|quota, identity', () => {
  let p: TestPlatform;
  let owner: Record<string, string>;
  let service: Record<string, string>;
  let agentId: string;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'files-cli-'));
  beforeAll(async () => {
    p = await startTestPlatform();
    const api = `http://api.localhost:${p.port}`;
    owner = { PLATFORM_API_URL: api, PLATFORM_API_KEY: p.node.demo!.userKey };
    service = { PLATFORM_API_URL: api, PLATFORM_API_KEY: p.node.demo!.serviceKey };
    agentId = (await p.node.services.store.agents.byHandle('demo'))!.id;
  });
  afterAll(async () => {
    await p.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('[SURF-16] [SURF-18] [SURF-22] [SURF-23] lists, measures and downloads attachments, browses the home, links an identity', async () => {
    const bytes = Buffer.from('a file sent to the agent\n');
    const sent = await call(p, 'SendMessage', { message: userMessage('hi', { parts: [{ text: 'hi' }, { raw: bytes.toString('base64'), filename: 'note.txt', mediaType: 'text/plain' }] }) });
    expect(sent.json.error).toBeUndefined();
    const { userId, accountId } = await demoUser(p);
    const home = path.join(p.config.workspacesDir, accountId, ...workspaceAnchor('agent', agentId, userId).split('/'));
    mkdirSync(home, { recursive: true });
    writeFileSync(path.join(home, 'draft.md'), '# draft');
    const code = await runCli(['identity', 'link-code', '--provider', 'slack', '--external-id', 'U42', '--json'], service);
    expect(code.code, code.stderr).toBe(0);

    const out = path.join(dir, 'got.txt');
    const [list, quota, files, quotaHome, cat, verify, usage] = await Promise.all([
      runCli(['attachments', 'list', '--json'], owner),
      runCli(['attachments', 'quota', '--json'], owner),
      runCli(['agents', 'files', agentId, '--json'], owner),
      runCli(['agents', 'quota', agentId, '--json'], owner),
      runCli(['agents', 'cat', agentId, 'draft.md'], owner),
      runCli(['identity', 'verify', code.json.code, '--json'], owner),
      runCli(['attachments', 'url'], owner),
    ]);
    expect(list.code, list.stderr).toBe(0);
    const a = list.json.attachments[0];
    expect(a).toMatchObject({ filename: 'note.txt', media_type: 'text/plain', size: bytes.length });
    expect(quota.json).toMatchObject({ used_bytes: bytes.length, files: 1, limit_bytes: 1024 ** 3 });
    expect(files.json.entries.map((e: { name: string }) => e.name)).toEqual(['draft.md']);
    expect(quotaHome.json).toMatchObject({ principal_id: userId, used_bytes: 7 });
    expect([cat.code, cat.stdout]).toEqual([0, '# draft']);
    expect(verify.json).toMatchObject({ provider: 'slack', external_id: 'U42', principal_id: userId });
    expect(usage.code).toBe(2);

    const [get, url, links, missing] = await Promise.all([
      runCli(['files', 'get', a.id, '--out', out], owner),
      runCli(['attachments', 'url', a.id, '--expires-in', '120', '--json'], owner),
      runCli(['identity', 'links', '--provider', 'slack', '--external-id', 'U42', '--json'], service),
      runCli(['agents', 'cat', agentId, 'nope.md', '--json'], owner),
    ]);
    expect(get.code, get.stderr).toBe(0);
    expect(readFileSync(out)).toEqual(bytes);
    expect(url.json).toMatchObject({ id: a.id, url: expect.stringContaining(`/v1/files/${a.id}/content?`) });
    expect(links.json.links.map((l: { principal_id: string }) => l.principal_id)).toEqual([userId]);
    expect([missing.code, missing.json?.error?.code ?? missing.stderr]).toEqual([1, 'MGMT_HOME_PATH_NOT_FOUND']);
  }, 150_000);

  it("[SURF-16] reads the agent's journal for a principal, and removes an entry", async () => {
    await p.node.services.admin.bindAgent({ agent: 'demo', capability: 'builtin-journal' });
    const caller = await callerOf(p, p.node.demo!.serviceKey);
    const [write] = (await p.node.services.toolRegistry.bound({ kind: 'agent', id: agentId, accountId: caller.accountId })).filter((t) => t.name === 'journal_write');
    const written = (await write!.invoke(caller, { entry: 'shipped the release', kind: 'did' }, { thread: { contextId: 'ctx-cli', taskId: 't-cli' } })) as { value: { id: string } };
    const [own, theirs, table] = await Promise.all([
      runCli(['agents', 'journal', agentId, '--json'], service),
      runCli(['agents', 'journal', agentId, '--principal', caller.principalId, '--kind', 'did', '--json'], owner),
      runCli(['agents', 'journal', agentId, '--principal', caller.principalId, '--thread', 'ctx-cli'], owner),
    ]);
    expect(own.code, own.stderr).toBe(0);
    expect(own.json).toMatchObject({ principal_id: caller.principalId, entries: [{ id: written.value.id, kind: 'did', content: 'shipped the release', context_id: 'ctx-cli' }], next_cursor: null });
    expect(theirs.json.entries.map((e: { id: string }) => e.id)).toEqual([written.value.id]);
    expect(table.stdout).toMatch(/did\s+ctx-cli\s+[0-9a-f-]{36}\s+shipped the release/);
    const removed = await runCli(['agents', 'journal-delete', agentId, written.value.id, '--principal', caller.principalId], owner);
    expect([removed.code, removed.stdout]).toEqual([0, `removed journal entry ${written.value.id}\n`]);
    const again = await runCli(['agents', 'journal-delete', agentId, written.value.id], service);
    expect([again.code, again.stderr]).toEqual([1, `error: no journal entry ${written.value.id} in this journal\n`]);
  }, 60_000);
  it('lists, shows and cancels schedules', async () => {
    await p.node.services.admin.bindAgent({ agent: 'demo', capability: 'builtin-scheduler' });
    const caller = await callerOf(p, p.node.demo!.serviceKey);
    const [run] = (await p.node.services.toolRegistry.bound({ kind: 'agent', id: agentId, accountId: caller.accountId })).filter((t) => t.name === 'schedule_run');
    const made = (await run!.invoke(caller, { message: 'weekly report', cron: '0 8 * * 1' }, { thread: { contextId: 'ctx-cli', taskId: 't-cli' } })) as { value: { id: string } };
    const [list, table, show] = await Promise.all([
      runCli(['schedules', 'list', '--agent', agentId, '--json'], service),
      runCli(['schedules', 'list'], owner),
      runCli(['schedules', 'show', made.value.id, '--json'], service),
    ]);
    expect(list.code, list.stderr).toBe(0);
    expect(list.json.schedules.map((x: { id: string }) => x.id)).toEqual([made.value.id]);
    expect(table.stdout).toMatch(new RegExp(`${made.value.id}\\s+active\\s+0 8 \\* \\* 1 \\(UTC\\)`));
    expect(show.json).toMatchObject({ id: made.value.id, status: 'active', kind: 'cron', runs: 0 });
    const canceled = await runCli(['schedules', 'cancel', made.value.id, '--json'], service);
    expect([canceled.code, canceled.json.status]).toEqual([0, 'canceled']);
    const again = await runCli(['schedules', 'cancel', made.value.id], service);
    expect([again.code, again.stderr]).toEqual([1, `error: schedule ${made.value.id} has ended (canceled)\n`]);
    expect((await runCli(['schedules', 'show'], service)).code).toBe(2);
  }, 60_000);

  it('lists, shows, rotates the secret of and deletes triggers', async () => {
    const caller = await callerOf(p, p.node.demo!.serviceKey);
    const made = await p.node.services.triggers.create(caller, agentId, { kind: 'webhook', message: 'ci finished' });
    const id = made.trigger.id;
    const [list, table, show] = await Promise.all([
      runCli(['triggers', 'list', '--agent', agentId, '--json'], service),
      runCli(['triggers', 'list'], owner),
      runCli(['triggers', 'show', id, '--json'], service),
    ]);
    expect(list.code, list.stderr).toBe(0);
    expect(list.json.triggers.map((x: { id: string }) => x.id)).toEqual([id]);
    expect(table.stdout).toMatch(new RegExp(`${id}\\s+webhook\\s+http://agent-demo\\.\\S+/triggers/${id}\\s+0`));
    expect(show.json).toMatchObject({ id, kind: 'webhook', fires: 0, url: made.url });
    const rotated = await runCli(['triggers', 'rotate-secret', id, '--json'], service);
    expect([rotated.code, rotated.json.id]).toEqual([0, id]);
    expect(rotated.json.secret).toMatch(/^whsec_/);
    expect(rotated.json.secret).not.toBe(made.secret);
    const deleted = await runCli(['triggers', 'delete', id], service);
    expect([deleted.code, deleted.stdout]).toEqual([0, `deleted trigger ${id}\n`]);
    const again = await runCli(['triggers', 'delete', id], service);
    expect([again.code, again.stderr]).toEqual([1, `error: no trigger ${id} visible to this caller\n`]);
    expect((await runCli(['triggers', 'show'], service)).code).toBe(2);
  }, 60_000);
});
