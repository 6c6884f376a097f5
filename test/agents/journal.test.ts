import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { JOURNAL_LIMITS, runAdminCommand, type Caller, type ToolEntry } from '../../runtime/index.ts';
import { runCli } from '../helpers/cli.ts';
import { sdkClient, sdkFetch, sdkMessage, sdkText } from '../helpers/a2a.ts';
import { otherCaller, rulesFile } from '../helpers/agents.ts';
import { aguiAgent, aguiRun } from '../helpers/agui.ts';
import { callerOf } from '../helpers/mcp.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

const RULES = `name: demo
rules:
  - when: { after_tool: journal_write }
    reply: "Noted: {{result}}"
  - when: { after_tool: journal_read }
    reply: "From my journal: {{result}}"
  - when: { contains: remember that, tool: journal_write }
    call: { tool: journal_write, arguments: { entry: "{{after:remember that}}", kind: remember } }
  - when: { contains: what do you know about, tool: journal_read }
    call: { tool: journal_read, arguments: { query: "{{after:what do you know about}}" } }
  - when: { contains: in this conversation, tool: journal_read }
    call: { tool: journal_read, arguments: { thread: current } }
  - reply: "plain answer"
`;

/** The Journal built-in (issue 15 §2): written and recalled by the agent, read by people, never on an MCP gateway. */
describe('the Journal built-in', () => {
  let p: TestPlatform;
  let agentId: string;
  let service: Caller;
  let journalTools: Map<string, ToolEntry>;
  const owner = () => ({ authorization: `Bearer ${p.node.demo!.userKey}` });
  const api = (method: 'GET' | 'DELETE', url: string, headers = owner()) => p.call(method, url, { headers });

  beforeAll(async () => {
    p = await startTestPlatform({ env: { PLATFORM_SCRIPTED_RULES: await rulesFile(RULES) } });
    agentId = (await p.node.services.store.agents.byHandle('demo'))!.id;
    await p.node.services.admin.bindAgent({ agent: 'demo', capability: 'builtin-journal' });
    service = await callerOf(p, p.node.demo!.serviceKey);
    const bound = await p.node.services.toolRegistry.bound({ kind: 'agent', id: agentId, accountId: p.node.demo!.accountId });
    journalTools = new Map(bound.filter((t) => t.name.startsWith('journal_')).map((t) => [t.name, t]));
  }, 60_000);
  afterAll(() => p?.close());

  it('the agent writes an entry in one conversation and recalls it in another, through the official A2A client; the entry is dated and names its thread', async () => {
    const client = await sdkClient(p, p.node.demo!.serviceKey);
    const wrote = (await client.sendMessage(sdkMessage('please remember that the customer prefers invoices in EUR'))) as any;
    expect(sdkText(wrote)).toMatch(/^Noted: \{"id":"[0-9a-f-]{36}","date":"\d{4}-\d{2}-\d{2}","at":"[^"]+"\}$/);
    const firstThread = wrote.contextId as string;

    const recalled = (await client.sendMessage(sdkMessage('what do you know about invoices'))) as any;
    expect(recalled.contextId).not.toBe(firstThread);
    const answer = JSON.parse(sdkText(recalled).replace(/^From my journal: /, ''));
    expect(answer.entries).toHaveLength(1);
    expect(answer.entries[0]).toMatchObject({ kind: 'remember', content: 'the customer prefers invoices in EUR', thread: firstThread, tags: [], date: new Date().toISOString().slice(0, 10) });
    expect(answer.entries[0].rank).toBeGreaterThan(0);

    // "This conversation" reads only the entries written in it: the second thread has none.
    const here = (await client.sendMessage(sdkMessage('anything in this conversation?', recalled.contextId))) as any;
    expect(JSON.parse(sdkText(here).replace(/^From my journal: /, ''))).toEqual({ entries: [] });
  });

  it('the same journal is recalled over AG-UI with the official HttpAgent', async () => {
    const r = await aguiRun(aguiAgent(p, p.node.demo!.serviceKey), 'what do you know about EUR');
    expect(r.error).toBeNull();
    const result = r.events.find((e) => e.type === 'TOOL_CALL_RESULT') as any;
    expect(JSON.parse(result.content).entries.map((e: any) => e.content)).toEqual(['the customer prefers invoices in EUR']);
  });

  it('each user of the agent has a journal of their own', async () => {
    const other = await callerOf(p, await otherCaller(p));
    const read = await journalTools.get('journal_read')!.invoke(other, {}, { thread: { contextId: 'ctx-other', taskId: 't-other' } });
    expect(read).toEqual({ isError: false, value: { entries: [] } });
  });

  it('holds its limits at both edges: entry size, dates, a thread to read', async () => {
    const write = journalTools.get('journal_write')!;
    const at = { thread: { contextId: 'ctx-limits', taskId: 't-limits' } };
    const eight = Array.from({ length: JOURNAL_LIMITS.tags }, (_, i) => `t${i}`);
    expect((await write.invoke(service, { entry: 'tagged', tags: eight }, at)).isError).toBe(false);
    await expect(write.invoke(service, { entry: 'x', tags: [...eight, 'one-more'] }, at)).rejects.toMatchObject({ code: 'TOOL_INVALID_ARGUMENTS' });
    const full = await write.invoke(service, { entry: 'x'.repeat(JOURNAL_LIMITS.contentBytes), tags: ['limits'] }, at);
    expect(full.isError).toBe(false);
    const over = await write.invoke(service, { entry: 'x'.repeat(JOURNAL_LIMITS.contentBytes + 1) }, at);
    expect(over).toMatchObject({ isError: true, message: `an entry holds at most ${JOURNAL_LIMITS.contentBytes} bytes: write the gist, or several entries` });
    const nul = await write.invoke(service, { entry: 'a\0b' }, at);
    expect(nul).toMatchObject({ isError: true, message: 'an entry cannot hold a NUL character' });
    await expect(write.invoke(service, { entry: 'x', kind: 'gossip' }, at)).rejects.toMatchObject({ code: 'TOOL_INVALID_ARGUMENTS' });

    const read = journalTools.get('journal_read')!;
    const today = new Date().toISOString().slice(0, 10);
    const inDay = (await read.invoke(service, { since: today, until: today, thread: 'current' }, at)) as any;
    expect(inDay.value.entries.map((e: any) => e.tags)).toEqual([['limits'], eight]);
    const after = (await read.invoke(service, { since: new Date(Date.now() + 60_000).toISOString() }, at)) as any;
    expect(after.value.entries).toEqual([]);
    expect(await read.invoke(service, { since: '2026-02-30' }, at)).toMatchObject({ isError: true, message: 'since: "2026-02-30" is neither a day (YYYY-MM-DD) nor an ISO 8601 time' });
    expect(await read.invoke(service, { thread: 'current' }, {})).toMatchObject({ isError: true, message: 'this call is made outside a conversation: read thread "all"' });
    await expect(read.invoke(service, { limit: JOURNAL_LIMITS.read + 1 }, at)).rejects.toMatchObject({ code: 'TOOL_INVALID_ARGUMENTS' });
    expect(((await read.invoke(service, { limit: JOURNAL_LIMITS.read }, at)) as any).value.entries.length).toBeGreaterThan(1);
  });

  it('[SURF-16] people read it on the management API (paged, searched) and as the home directory\'s .journal folder; users remove their entries', async () => {
    const whose = `principal_id=${service.principalId}`;
    const all = await api('GET', `/v1/agents/${agentId}/journal?${whose}&limit=1`);
    expect(all.status).toBe(200);
    expect(all.json.data).toMatchObject({ principal_id: service.principalId, entries: [{ kind: 'note', tags: ['limits'], context_id: 'ctx-limits', task_id: 't-limits' }] });
    const next = await api('GET', `/v1/agents/${agentId}/journal?${whose}&limit=1&cursor=${all.json.data.next_cursor}`);
    expect(next.json.data.entries.map((e: any) => e.content)).toEqual(['tagged']);
    const rest = await api('GET', `/v1/agents/${agentId}/journal?${whose}&cursor=${next.json.data.next_cursor}`);
    expect(rest.json.data).toEqual({ principal_id: service.principalId, entries: [expect.objectContaining({ content: 'the customer prefers invoices in EUR', kind: 'remember' })], next_cursor: null });
    const found = await api('GET', `/v1/agents/${agentId}/journal?${whose}&q=invoices`);
    expect(found.json.data).toMatchObject({ entries: [{ content: 'the customer prefers invoices in EUR', rank: expect.any(Number) }], next_cursor: null });
    const both = await api('GET', `/v1/agents/${agentId}/journal?${whose}&q=x&cursor=${all.json.data.next_cursor}`);
    expect([both.status, both.json.code]).toEqual([400, 'MGMT_INVALID_QUERY']);

    // The home directory: a .journal folder of day files, sized as they read.
    const root = await api('GET', `/v1/agents/${agentId}/files?${whose}`);
    expect(root.json.data.entries).toEqual([expect.objectContaining({ name: '.journal', type: 'directory' })]);
    const days = await api('GET', `/v1/agents/${agentId}/files?${whose}&path=.journal`);
    const today = `${new Date().toISOString().slice(0, 10)}.md`;
    expect(days.json.data.entries).toEqual([expect.objectContaining({ name: today, type: 'file' })]);
    const file = await p.call('GET', `/v1/agents/${agentId}/files/content?${whose}&path=.journal/${today}`, { headers: owner() });
    expect(file.status).toBe(200);
    expect(Buffer.byteLength(file.text)).toBe(days.json.data.entries[0].size);
    expect(file.text).toMatch(/^# Journal, \d{4}-\d{2}-\d{2}\n\n## \d{2}:\d{2}:\d{2} UTC · remember · thread [^\n]+\n\nthe customer prefers invoices in EUR\n\n/);
    expect(file.text).toContain(' · note · thread ctx-limits · #limits\n\n');
    expect(file.text).toContain(' · note · thread ctx-limits · #t0 #t1 #t2 #t3 #t4 #t5 #t6 #t7\n\ntagged\n\n');
    const missing = await api('GET', `/v1/agents/${agentId}/files/content?${whose}&path=.journal/2001-01-01.md`);
    expect([missing.status, missing.json.code]).toEqual([404, 'MGMT_HOME_PATH_NOT_FOUND']);

    // A member reads their own journal only; an entry is removed once.
    const member = { authorization: `Bearer ${await otherCaller(p)}` };
    const refused = await api('GET', `/v1/agents/${agentId}/journal?${whose}`, member);
    expect([refused.status, refused.json.code]).toEqual([403, 'MGMT_FORBIDDEN']);
    expect((await api('GET', `/v1/agents/${agentId}/journal`, member)).json.data.entries).toEqual([]);
    const id = found.json.data.entries[0].id;
    expect((await api('DELETE', `/v1/agents/${agentId}/journal/${id}?${whose}`)).status).toBe(204);
    const again = await api('DELETE', `/v1/agents/${agentId}/journal/${id}?${whose}`);
    expect([again.status, again.json.code]).toEqual([404, 'MGMT_JOURNAL_ENTRY_NOT_FOUND']);
  });

  it("the operator reads a user's journal with platform admin agent journal (by handle and principal), searched or newest first", async () => {
    const read = (params: Record<string, unknown>) => runAdminCommand(p.node.services.admin, 'agent.journal', { agent: 'demo', principal: service.principalId, ...params }) as Promise<any>;
    const all = await read({});
    expect(all).toMatchObject({ agent_id: agentId, principal_id: service.principalId });
    expect(all.entries.map((e: any) => e.kind)).toEqual(['note', 'note']);
    expect((await read({ query: 'tagged' })).entries.map((e: any) => e.content)).toEqual(['tagged']);
    expect((await read({ thread: 'ctx-limits', limit: 1 })).entries).toHaveLength(1);
    await expect(read({ limit: 101 })).rejects.toMatchObject({ code: 'ADMIN_INVALID', message: '--limit must be 1 to 100 (got 101)' });
    await expect(read({ principal: randomUUID() })).rejects.toMatchObject({ code: 'ADMIN_NOT_FOUND' });
    const usage = await runCli(['admin', 'agent', 'journal', '--agent', 'demo'], {});
    expect([usage.code, usage.stderr.split('\n')[0]]).toEqual([2, 'platform admin agent journal: --principal is required']);
  }, 30_000);

  it('[MCP-TOOLS-34] the journal never reaches an MCP gateway: binding it there is refused, and a binding made behind the operator\'s back lists nothing', async () => {
    const gateway = (await p.node.services.store.gateways.byHandle('demo'))!;
    await expect(p.node.services.admin.bindGateway({ gateway: gateway.id, capability: 'builtin-journal' })).rejects.toMatchObject({ code: 'ADMIN_INVALID', message: 'Journal is for agents only and never appears on an MCP gateway: bind it to an agent' });
    await p.node.services.store.builtinBindings.bind(gateway.accountId, { kind: 'gateway', id: gateway.id }, 'builtin-journal', 'test');
    p.node.services.toolRegistry.invalidate();
    const client = new Client({ name: 'journal-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${p.node.demo!.gatewayUrl}/`), { fetch: sdkFetch(p.node.demo!.userKey) }));
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names.length).toBeGreaterThan(0);
      expect(names.filter((n) => n.startsWith('journal_'))).toEqual([]);
    } finally {
      await client.close();
    }
  });
});
