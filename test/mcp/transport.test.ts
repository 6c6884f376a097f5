import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock, type Caller, type ManualClock } from '../../runtime/index.ts';
import { ACCEPT_BOTH, callerOf, createGateway, host, installPlugin, modern, openSession, rpc } from '../helpers/mcp.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { MAX_VALUES } from '../../edge/http/index.ts';

describe('MCP gateway transport and protocol eras', () => {
  let p: TestPlatform;
  let clock: ManualClock;
  let owner: Caller;
  let auth: Record<string, string>;

  beforeAll(async () => {
    clock = manualClock(Date.now());
    p = await startTestPlatform({ clock });
    owner = await callerOf(p, p.node.demo!.userKey);
    auth = { authorization: `Bearer ${p.node.demo!.userKey}` };
    const calc = await installPlugin(p, owner, { name: 'calc' });
    const g = await p.node.services.store.gateways.byHandle('demo');
    await p.node.services.admin.bindGateway({ gateway: g!.id, capability: calc });
    await createGateway(p, owner.accountId, 'open', 'public', 'direct');
  }, 60_000);
  afterAll(() => p.close());

  it('[MCP-TRANSPORT-01] [MCP-TRANSPORT-06] [MCP-TRANSPORT-07] [MCP-TRANSPORT-08] [MCP-PROTO-01] [MCP-PROTO-02] [MCP-PROTO-03] [MCP-PROTO-11] [MCP-PROTO-14] [SURF-02] initialize at the origin root answers one SSE frame with a session', async () => {
    const res = await rpc(p, 'demo', { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } }, auth);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
    // Exactly one event and nothing else: no keep-alive comments, no notifications.
    expect(res.text).toBe(`event: message\ndata: ${JSON.stringify(res.message)}\n\n`);
    expect(res.message).toEqual({
      jsonrpc: '2.0',
      id: 1,
      result: {
        protocolVersion: '2025-06-18',
        capabilities: { tools: {} },
        serverInfo: { name: 'platform-mcp-gateway', title: 'Platform MCP Gateway', version: '1.0.0', websiteUrl: expect.stringMatching(/^https:\/\//) },
      },
    });
    expect(res.headers['mcp-session-id']).toMatch(/^[\x21-\x7e]{20,}$/);
  });

  it('[MCP-PROTO-12] falls back to 2025-11-25 for a version it does not recognize', async () => {
    const res = await rpc(p, 'demo', { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2099-01-01', capabilities: {}, clientInfo: { name: 't', version: '1' } } }, auth);
    expect(res.message.result.protocolVersion).toBe('2025-11-25');
  });

  it('[MCP-TRANSPORT-02] [MCP-TRANSPORT-03] any unclaimed path is the MCP endpoint; there is no /sse or /messages endpoint of the old transport', async () => {
    const { headers } = await openSession(p, 'demo', auth);
    for (const path of ['/mcp', '/anything/else', '/messages']) {
      const res = await p.call('POST', path, { host: host(p, 'demo'), headers: { ...headers, accept: ACCEPT_BOTH, 'content-type': 'application/json' }, json: { jsonrpc: '2.0', id: 2, method: 'ping' } });
      expect(res.status, path).toBe(200);
      expect(res.text).toContain('"result":{}');
    }
    // The old HTTP+SSE transport's stream endpoint does not exist: a GET is refused like any GET.
    const sse = await p.call('GET', '/sse', { host: host(p, 'demo'), headers: { ...auth, accept: 'text/event-stream' } });
    expect(sse.status).toBe(405);
    expect(sse.headers['content-type']).not.toMatch(/event-stream/);
  });

  it('[MCP-TRANSPORT-04] a POST whose Accept lacks either type is 406; with both it is served', async () => {
    const body = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } };
    // Wildcards do not name the types: a client must say it reads both JSON and an event stream.
    for (const accept of ['application/json', 'text/event-stream', 'text/html', '', '*/*', 'application/*, text/*', 'application/jsonx, text/event-streams']) {
      const res = await rpc(p, 'demo', body, { ...auth, accept });
      expect(res.status, accept).toBe(406);
      expect(res.json.error.message).toMatch(/Accept/);
    }
    expect((await rpc(p, 'demo', body, { ...auth, accept: 'text/event-stream, application/json;q=0.9' })).status).toBe(200);
  });

  it('[MCP-TRANSPORT-05] a POST must be application/json (415 otherwise); bad JSON and bad envelopes get JSON-RPC errors, never a 500', async () => {
    const res = await rpc(p, 'demo', '{"jsonrpc":"2.0"}', { ...auth, 'content-type': 'text/plain' });
    expect(res.status).toBe(415);
    const bad = await rpc(p, 'demo', '{not json', auth);
    expect([bad.status, bad.json.error.code]).toEqual([400, -32700]);
    for (const env of [[], [{ jsonrpc: '2.0', id: 1, method: 'ping' }], { id: 1, method: 'ping' }, { jsonrpc: '1.0', id: 1, method: 'ping' }, { jsonrpc: '2.0', id: 1, method: 7 }, 'x', 42]) {
      const r = await rpc(p, 'demo', JSON.stringify(env), auth);
      expect(r.status, JSON.stringify(env)).toBe(400);
      expect(r.json.error.code).toBe(-32600);
    }
  });

  it('[MCP-LIMIT-08] a body of 4 MiB is read; above it the answer is 413', async () => {
    const { headers } = await openSession(p, 'demo', auth);
    const pad = (n: number) => {
      const base = JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'ping', params: { pad: '' } });
      return base.replace('"pad":""', `"pad":"${'x'.repeat(n - base.length)}"`);
    };
    const at = await rpc(p, 'demo', pad(4 * 1024 * 1024), headers);
    expect(at.status).toBe(200);
    const over = await rpc(p, 'demo', pad(4 * 1024 * 1024 + 1), headers);
    expect(over.status).toBe(413);
  });

  it('[MCP-LIMIT-08] a body past 256 KiB is parsed after admission; values and nesting hold their limits at both edges', async () => {
    const { headers } = await openSession(p, 'demo', auth);
    const call = (args: unknown, pad = 0) => JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'calc_add', arguments: args } }).padEnd(pad, ' ');
    // Large (parsed in the task pool) and small (parsed on arrival) bodies answer alike.
    for (const pad of [0, 1024 * 1024]) {
      const r = await rpc(p, 'demo', call({ a: 2, b: 3 }, pad), headers);
      expect([r.status, r.message.result?.content?.[0]?.text], String(pad)).toEqual([200, '5']);
    }
    // Depth: the root object is level 1, params 2, arguments 3; `x` then opens `n` more levels.
    const nested = (n: number) => ({ a: 1, b: 2, x: JSON.parse('['.repeat(n) + ']'.repeat(n)) });
    const refused = (r: Awaited<ReturnType<typeof rpc>>) => [r.status, r.json?.error?.code, r.json?.error?.message];
    for (const pad of [0, 512 * 1024]) {
      const at = await rpc(p, 'demo', call(nested(125), pad), headers);
      expect(at.status, `128 levels, pad ${pad}`).toBe(200);
      expect(at.message.error?.code, 'not a transport refusal').not.toBe(-32600);
      expect(refused(await rpc(p, 'demo', call(nested(126), pad), headers)), `129 levels, pad ${pad}`).toEqual([400, -32600, 'Invalid Request: the request nests arrays and objects deeper than 128 levels']);
    }
    // 5,000 levels: JSON.parse takes it; the stack of a later walk would not (an internal error before this limit).
    const deep = (pad = 0) => call({ a: 1, b: 2, x: 'X' }, pad).replace('"X"', '['.repeat(5000) + ']'.repeat(5000));
    expect(refused(await rpc(p, 'demo', deep(), headers))).toEqual([400, -32600, 'Invalid Request: the request nests arrays and objects deeper than 128 levels']);
    // Values: the envelope (root, jsonrpc, id, method, params, name, arguments) is 7, `a` and `b` 2, the array 1.
    const many = (n: number) => ({ a: 1, b: 2, xs: new Array(n).fill(0) });
    expect(MAX_VALUES).toBe(10_000);
    for (const pad of [0, 512 * 1024]) {
      expect((await rpc(p, 'demo', call(many(MAX_VALUES - 10), pad), headers)).status, `10,000 values, pad ${pad}`).toBe(200);
      expect(refused(await rpc(p, 'demo', call(many(MAX_VALUES - 9), pad), headers)), `10,001 values, pad ${pad}`).toEqual([400, -32600, 'Invalid Request: the request holds more than 10000 JSON values']);
    }
    // Refusals of the body come after admission: without a credential the answer is still 401.
    expect((await rpc(p, 'demo', deep(512 * 1024))).status).toBe(401);
  });

  it('[MCP-PROTO-15] sessions: 400 without the header, 404 when unknown, expired after 7 days (not refreshed by use), ended by DELETE', async () => {
    const ping = (h: Record<string, string>) => rpc(p, 'demo', { jsonrpc: '2.0', id: 5, method: 'ping' }, h);
    expect((await ping(auth)).status).toBe(400);
    expect((await ping({ ...auth, 'mcp-session-id': 'nope' })).status).toBe(404);
    const { headers } = await openSession(p, 'demo', auth);
    // Jumps without firing the node's own timers (days of passivation and poll ticks are not the point here).
    clock.set(clock.now() + 6 * 24 * 3600 * 1000);
    expect((await ping(headers)).status).toBe(200);
    clock.set(clock.now() + 24 * 3600 * 1000 - 1000);
    expect((await ping(headers)).status).toBe(200);
    clock.set(clock.now() + 1000);
    expect((await ping(headers)).status).toBe(404);
    const second = await openSession(p, 'demo', auth);
    // Only the caller who opened a session can end it: to anyone else it is unknown, and it lives on.
    const byOther = await p.call('DELETE', '/', { host: host(p, 'demo'), headers: { ...second.headers, authorization: `Bearer ${p.node.demo!.serviceKey}` } });
    expect(byOther.status).toBe(404);
    expect((await ping(second.headers)).status).toBe(200);
    const del = await p.call('DELETE', '/', { host: host(p, 'demo'), headers: second.headers });
    expect(del.status).toBe(204);
    expect((await ping(second.headers)).status).toBe(404);
    // A session is valid on its own gateway only.
    const other = await openSession(p, 'open', {});
    expect((await rpc(p, 'demo', { jsonrpc: '2.0', id: 5, method: 'ping' }, { ...auth, 'mcp-session-id': other.sid })).status).toBe(404);
  });

  it('[MCP-PROTO-04] [MCP-PROTO-06] [MCP-PROTO-07] [MCP-PROTO-08] [MCP-PROTO-09] [MCP-PROTO-10] ping, empty lists, and -32601 for what the gateway does not implement', async () => {
    const { headers } = await openSession(p, 'demo', auth);
    const call = async (method: string) => (await rpc(p, 'demo', { jsonrpc: '2.0', id: 9, method, params: {} }, headers)).message;
    expect((await call('ping')).result).toEqual({});
    expect((await call('resources/list')).result).toMatchObject({ resources: [] });
    expect((await call('resources/templates/list')).result).toMatchObject({ resourceTemplates: [] });
    expect((await call('prompts/list')).result).toMatchObject({ prompts: [] });
    for (const m of ['resources/read', 'resources/subscribe', 'resources/unsubscribe', 'prompts/get', 'logging/setLevel', 'completion/complete', 'sampling/createMessage', 'nonsense']) {
      expect((await call(m)).error, m).toMatchObject({ code: -32601 });
    }
  });

  it('[MCP-PROTO-13] [MCP-TRANSPORT-09] 2026-07-28 is stateless: no session id, server/discover, resultType, GET answered 405', async () => {
    const d = modern('server/discover');
    const res = await rpc(p, 'demo', d.body, { ...auth, ...d.headers });
    expect(res.status).toBe(200);
    expect(res.headers['mcp-session-id']).toBeUndefined();
    expect(res.message.result).toMatchObject({ supportedVersions: expect.arrayContaining(['2025-11-25', '2026-07-28']), capabilities: { tools: {} }, resultType: 'complete' });
    const list = modern('tools/list');
    const tools = await rpc(p, 'demo', list.body, { ...auth, ...list.headers });
    expect(tools.message.result).toMatchObject({ ttlMs: 300000, cacheScope: 'private', resultType: 'complete' });
    expect(tools.headers['mcp-session-id']).toBeUndefined();
    const get = await p.call('GET', '/', { host: host(p, 'demo'), headers: { ...auth, accept: 'text/event-stream', 'mcp-protocol-version': '2026-07-28' } });
    expect(get.status).toBe(405);
  });

  it('2026-07-28 checks headers against the body: -32020 on a mismatch, -32022 for an unknown version, -32602 without _meta, 404 for removed methods', async () => {
    const call = modern('tools/call', { name: 'calc_add', arguments: { a: 1, b: 2 } });
    const ok = await rpc(p, 'demo', call.body, { ...auth, ...call.headers });
    expect(ok.message.result).toMatchObject({ content: [{ type: 'text', text: '3' }], isError: false, resultType: 'complete' });
    const wrongMethod = await rpc(p, 'demo', call.body, { ...auth, ...call.headers, 'mcp-method': 'tools/list' });
    expect([wrongMethod.status, wrongMethod.json.error.code]).toEqual([400, -32020]);
    const wrongName = await rpc(p, 'demo', call.body, { ...auth, ...call.headers, 'mcp-name': 'calc_greet' });
    expect([wrongName.status, wrongName.json.error.code]).toEqual([400, -32020]);
    const encoded = await rpc(p, 'demo', call.body, { ...auth, ...call.headers, 'mcp-name': `=?base64?${Buffer.from('calc_add').toString('base64')}?=` });
    expect(encoded.status).toBe(200);
    const noHeader = { ...call.headers };
    delete (noHeader as Record<string, string>)['mcp-protocol-version'];
    const missing = await rpc(p, 'demo', call.body, { ...auth, ...noHeader });
    expect([missing.status, missing.json.error.code]).toEqual([400, -32020]);
    // A session-era version header names the era, whatever the body carries: such a request needs its session.
    const legacyHeader = await rpc(p, 'demo', call.body, { ...auth, ...call.headers, 'mcp-protocol-version': '2025-11-25' });
    expect(legacyHeader.status).toBe(400);
    expect(legacyHeader.json.error.message).toMatch(/Mcp-Session-Id/);
    // A header that disagrees with the body is a mismatch; a version nobody supports is -32022 with the supported list.
    const altered = await rpc(p, 'demo', call.body, { ...auth, ...call.headers, 'mcp-protocol-version': '2099-01-01' });
    expect([altered.status, altered.json.error.code]).toEqual([400, -32020]);
    const future = modern('tools/list');
    future.body.params._meta['io.modelcontextprotocol/protocolVersion'] = '2099-01-01';
    const unknown = await rpc(p, 'demo', future.body, { ...auth, ...future.headers, 'mcp-protocol-version': '2099-01-01' });
    expect([unknown.status, unknown.json.error.code]).toEqual([400, -32022]);
    expect(unknown.json.error.data.supported).toContain('2026-07-28');
    const bare = await rpc(p, 'demo', { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }, { ...auth, 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' });
    expect([bare.status, bare.json.error.code]).toEqual([400, -32602]);
    for (const m of ['ping', 'initialize', 'logging/setLevel']) {
      const r = modern(m);
      const res = await rpc(p, 'demo', r.body, { ...auth, ...r.headers });
      expect([res.status, res.json.error.code, res.json.id], m).toEqual([404, -32601, 7]);
    }
  });

  it('client notifications and responses are accepted with 202 and no body', async () => {
    const { headers } = await openSession(p, 'demo', auth);
    for (const msg of [{ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } }, { jsonrpc: '2.0', id: 4, result: {} }]) {
      const res = await rpc(p, 'demo', msg, headers);
      expect([res.status, res.text]).toEqual([202, '']);
    }
  });

  it('[SURF-04] an unknown handle, or a host built from the UUID, is not a gateway', async () => {
    const g = await p.node.services.store.gateways.byHandle('demo');
    for (const h of ['nope', g!.id]) {
      const res = await p.call('POST', '/', { host: `mcp-${h}.${p.config.domain}`, headers: { ...auth, accept: ACCEPT_BOTH, 'content-type': 'application/json' }, json: { jsonrpc: '2.0', id: 1, method: 'ping' } });
      expect(res.status, h).toBe(404);
    }
  });
});
