import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Caller } from '../../runtime/index.ts';
import { buildGrantsComponent } from '../helpers/js-components.ts';
import { npack } from '../helpers/npack.ts';
import { ACCEPT_BOTH, callerOf, createGateway, installPlugin, openSession, rpc } from '../helpers/mcp.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { versionOutcome, registerUpload } from '../../runtime/index.ts';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

describe('MCP gateways are per account; sessions scope nothing', () => {
  let p: TestPlatform;
  let owner: Caller;
  let auth: Record<string, string>;

  beforeAll(async () => {
    p = await startTestPlatform({ env: { PLATFORM_WORKSPACES_DIR: mkdtempSync(path.join(os.tmpdir(), 'ws-')) } });
    owner = await callerOf(p, p.node.demo!.userKey);
    auth = { authorization: `Bearer ${p.node.demo!.userKey}` };
  }, 60_000);
  afterAll(() => p.close());

  it('[SURF-05] every account has its own gateway hosts and tools; there is no platform-wide MCP server', async () => {
    const other = await p.node.services.admin.createAccount({ name: 'other' });
    const svc = await p.node.services.admin.createPrincipal({ account: other.id, name: 'svc', role: 'owner' });
    const otherKey = (await p.node.services.admin.createKey({ principal: svc.id })).key;
    await p.node.services.admin.setBudget({ account: other.id, credits: 100 });
    const mine = await installPlugin(p, owner, { name: 'calc' });
    const theirs = await installPlugin(p, { accountId: other.id, principalId: svc.id, kind: 'service', role: 'owner', via: 'api_key' }, { name: 'calc' });
    const a = await createGateway(p, owner.accountId, 'acct-a', 'private', 'direct');
    const b = await createGateway(p, other.id, 'acct-b', 'private', 'direct');
    await p.node.services.admin.bindGateway({ gateway: a.id, capability: mine });
    await p.node.services.admin.bindGateway({ gateway: b.id, capability: theirs });
    // A gateway binds only capabilities of its own account.
    await expect(p.node.services.admin.bindGateway({ gateway: a.id, capability: theirs })).rejects.toMatchObject({ code: 'ADMIN_NOT_FOUND' });
    // Each account reaches its own host with its own credential, and not the other's.
    expect((await openSession(p, 'acct-b', { authorization: `Bearer ${otherKey}` })).init.status).toBe(200);
    expect((await rpc(p, 'acct-a', { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } }, { authorization: `Bearer ${otherKey}` })).status).toBe(401);
    // No shared host: the bare mcp label, the domain itself and api. are not MCP servers.
    for (const h of [`mcp.${p.config.domain}`, `mcp-.${p.config.domain}`]) {
      const res = await p.call('POST', '/', { host: h, headers: { ...auth, accept: ACCEPT_BOTH, 'content-type': 'application/json' }, json: { jsonrpc: '2.0', id: 1, method: 'tools/list' } });
      expect(res.status, h).toBe(404);
    }
    const api = await p.call('POST', '/', { headers: { ...auth, accept: ACCEPT_BOTH, 'content-type': 'application/json' }, json: { jsonrpc: '2.0', id: 1, method: 'tools/list' } });
    expect(api.status).toBe(404);
    expect(api.text).not.toContain('jsonrpc');
  });

  it('[MCP-PROTO-17] [MCP-PROTO-16] the workspace comes from the gateway and the user, not the session: two sessions of one user share it, other users and other gateways do not', async () => {
    const wasm = await buildGrantsComponent();
    const archive = await npack([
      { name: 'g.wasm', body: Buffer.from(wasm) },
      { name: 'platform.yaml', body: 'schema_version: "1.0"\nmetadata: { name: notes }\nresources: { limits: { timeout: 20s } }\npermissions: { filesystem: { allow: [{ uri: "fs://*.txt", access: [read, write] }] } }' },
    ]);
    const up = await registerUpload(p.node.services, { accountId: owner.accountId, principalId: owner.principalId, filename: 'notes.npack', archive });
    await versionOutcome(p.node.services, { accountId: owner.accountId, capabilityId: up.capability_id, version: 1 });
    const g = await createGateway(p, owner.accountId, 'notes', 'private', 'direct');
    await p.node.services.admin.bindGateway({ gateway: g.id, capability: up.capability_id });
    const call = async (headers: Record<string, string>, name: string, args: unknown) =>
      (await rpc(p, 'notes', { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name, arguments: args } }, headers)).message.result;
    const first = await openSession(p, 'notes', auth);
    expect(await call(first.headers, 'notes_write_file', { path: 'memo.txt', text: 'kept across sessions' })).toMatchObject({ isError: false });
    await p.call('DELETE', '/', { host: `mcp-notes.${p.config.domain}`, headers: first.headers });
    const second = await openSession(p, 'notes', auth);
    expect(second.sid).not.toBe(first.sid);
    expect(await call(second.headers, 'notes_read_file', { path: 'memo.txt' })).toMatchObject({ isError: false, content: [{ type: 'text', text: 'kept across sessions' }] });
    // Another user of the account on the same gateway has a workspace of their own.
    const admin = p.node.services.admin;
    const colleague = await admin.createUser({ account: owner.accountId, email: 'colleague@example.com', password: 'correct horse battery', role: 'member' });
    const colleagueAuth = { authorization: `Bearer ${(await admin.createKey({ principal: colleague.id })).key}` };
    const theirs = await openSession(p, 'notes', colleagueAuth);
    expect(await call(theirs.headers, 'notes_read_file', { path: 'memo.txt' })).toMatchObject({ isError: true });
    expect(await call(theirs.headers, 'notes_write_file', { path: 'memo.txt', text: 'theirs' })).toMatchObject({ isError: false });
    expect(await call(second.headers, 'notes_read_file', { path: 'memo.txt' })).toMatchObject({ content: [{ type: 'text', text: 'kept across sessions' }] });
    // The same user on another gateway of the account starts from an empty workspace too.
    const g2 = await createGateway(p, owner.accountId, 'notes-two', 'private', 'direct');
    await admin.bindGateway({ gateway: g2.id, capability: up.capability_id });
    const elsewhere = await openSession(p, 'notes-two', auth);
    const res = await rpc(p, 'notes-two', { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'notes_read_file', arguments: { path: 'memo.txt' } } }, elsewhere.headers);
    expect(res.message.result).toMatchObject({ isError: true });
  }, 120_000);

  it('[MCP-PROTO-18] [MCP-TOOLS-14] the gateway never notifies: a tool bound mid-session shows up on the next list only, one frame per answer', async () => {
    const g = await createGateway(p, owner.accountId, 'quiet', 'private', 'direct');
    const s = await openSession(p, 'quiet', auth);
    const before = await rpc(p, 'quiet', { jsonrpc: '2.0', id: 3, method: 'tools/list' }, s.headers);
    expect(before.frames).toHaveLength(1);
    expect(before.message.result.tools).toEqual([]);
    const calc = await installPlugin(p, owner, { name: 'quiet-calc' });
    await p.node.services.admin.bindGateway({ gateway: g.id, capability: calc });
    const after = await rpc(p, 'quiet', { jsonrpc: '2.0', id: 4, method: 'tools/list' }, s.headers);
    expect(after.frames).toHaveLength(1);
    expect(after.text).not.toContain('notifications/');
    expect(after.message.result.tools.map((t: { name: string }) => t.name)).toContain('quiet_calc_add');
    expect(after.message.result.ttlMs).toBe(300000);
    const stream = await p.call('GET', '/', { host: `mcp-quiet.${p.config.domain}`, headers: { ...s.headers, accept: 'text/event-stream' } });
    expect(stream.status).toBe(405);
  });
});
