import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Caller } from '../../runtime/index.ts';
import { callerOf, installPlugin, modern, openSession, rpc } from '../helpers/mcp.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

/** MCP messages checked by the SDK's schemas per protocol revision: the answers a malformed message gets. */
describe('MCP message schemas', () => {
  let p: TestPlatform;
  let owner: Caller;
  let auth: Record<string, string>;
  let session: Record<string, string>;
  const send = (body: unknown, headers = session) => rpc(p, 'demo', body, headers);

  beforeAll(async () => {
    p = await startTestPlatform();
    owner = await callerOf(p, p.node.demo!.userKey);
    auth = { authorization: `Bearer ${p.node.demo!.userKey}` };
    const calc = await installPlugin(p, owner, { name: 'calc' });
    const g = await p.node.services.store.gateways.byHandle('demo');
    await p.node.services.admin.bindGateway({ gateway: g!.id, capability: calc });
    session = (await openSession(p, 'demo', auth)).headers;
  }, 60_000);
  afterAll(() => p.close());

  it('answers tools/call and tools/list params that fail their schema with -32602 naming the member, in the SSE frame', async () => {
    for (const [method, params, message] of [
      ['tools/call', { arguments: {} }, 'Invalid params: params.name must be a string'],
      ['tools/call', { name: 7 }, 'Invalid params: params.name must be a string'],
      ['tools/call', { name: 'calc_add', arguments: [1, 2] }, 'Invalid params: params.arguments must be an object'],
      ['tools/call', { name: 'calc_add', arguments: 'a=1' }, 'Invalid params: params.arguments must be an object'],
      // Two problems: the first in the schema's order is named, the name before the arguments.
      ['tools/call', { arguments: 'x' }, 'Invalid params: params.name must be a string'],
      ['tools/call', { name: 7, arguments: [] }, 'Invalid params: params.name must be a string'],
      ['tools/list', { cursor: 12 }, 'Invalid params: params.cursor must be a string'],
    ] as const) {
      const res = await send({ jsonrpc: '2.0', id: 21, method, params });
      expect(res.status, message).toBe(200);
      expect(res.message, message).toEqual({ jsonrpc: '2.0', id: 21, error: { code: -32602, message } });
    }
    // What passes is used as sent.
    const ok = await send({ jsonrpc: '2.0', id: 22, method: 'tools/call', params: { name: 'calc_add', arguments: { a: 2, b: 3 }, extra: true } });
    expect(ok.message.result).toMatchObject({ content: [{ type: 'text', text: '5' }], isError: false });
  });

  it('[MCP-PROTO-12] initialize: a version it does not recognize falls back; params missing what the schema requires are -32602 and open no session', async () => {
    const init = (params: unknown) => send({ jsonrpc: '2.0', id: 1, method: 'initialize', params }, auth);
    const unknown = await init({ protocolVersion: '1999-01-01', capabilities: {}, clientInfo: { name: 't', version: '1' } });
    expect(unknown.message.result.protocolVersion).toBe('2025-11-25');
    for (const [params, message] of [
      [{ protocolVersion: '2025-11-25', capabilities: {} }, 'Invalid params: params.clientInfo must be an object'],
      [{ protocolVersion: 5, capabilities: {}, clientInfo: { name: 't', version: '1' } }, 'Invalid params: params.protocolVersion must be a string'],
      [{ protocolVersion: '2025-11-25', clientInfo: { name: 't', version: '1' } }, 'Invalid params: params.capabilities must be an object'],
      [{ protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't' } }, 'Invalid params: params.clientInfo.version must be a string'],
    ] as const) {
      const res = await init(params);
      expect([res.status, res.message], message).toEqual([200, { jsonrpc: '2.0', id: 1, error: { code: -32602, message } }]);
      expect(res.headers['mcp-session-id'], message).toBeUndefined();
    }
  });

  it('answers params that are not an object, or a malformed _meta, with HTTP 400 and -32602 carrying the request id', async () => {
    for (const [params, message] of [
      [5, 'Invalid params: params must be an object'],
      [['a'], 'Invalid params: params must be an object'],
      [{ _meta: 'x' }, 'Invalid params: params._meta must be an object'],
      [{ _meta: { progressToken: 1.5 } }, 'Invalid params: params._meta.progressToken must be a string or an integer'],
    ] as const) {
      const res = await send({ jsonrpc: '2.0', id: 'r-9', method: 'tools/list', params });
      expect([res.status, res.json], message).toEqual([400, { jsonrpc: '2.0', id: 'r-9', error: { code: -32602, message } }]);
    }
  });

  it('answers envelopes that are not a JSON-RPC request, notification or response with HTTP 400 and -32600', async () => {
    for (const [body, message] of [
      [{ jsonrpc: '2.0', id: 1, method: 'ping', extra: 1 }, 'Invalid Request: the message has an unexpected member "extra"'],
      [{ jsonrpc: '2.0', id: null, method: 'ping' }, 'Invalid Request: id must be a string or a finite number'],
      [{ jsonrpc: '2.0', id: {}, method: 'ping' }, 'Invalid Request: id must be a string or a finite number'],
      [{ jsonrpc: '2.0', id: 1 }, 'Invalid Request: method must be a string'],
      [{ jsonrpc: '2.0', method: 7 }, 'Invalid Request: method must be a string'],
      [{ jsonrpc: 2, id: 1, method: 'ping' }, 'Invalid Request: expected a JSON-RPC 2.0 message'],
      [null, 'Invalid Request: expected a JSON-RPC 2.0 message'],
      [{ jsonrpc: '2.0', id: 4, result: 5 }, 'Invalid Request: result must be an object'],
      [{ jsonrpc: '2.0', id: 4, error: { code: 'x', message: 'm' } }, 'Invalid Request: error.code must be a number'],
    ] as const) {
      const res = await send(body);
      expect([res.status, res.json], JSON.stringify(body)).toEqual([400, { jsonrpc: '2.0', id: null, error: { code: -32600, message } }]);
    }
    // A notification whose params fail is refused too; one that passes is accepted with nothing to answer.
    const notification = await send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: 3 });
    expect([notification.status, notification.json.error.code]).toEqual([400, -32602]);
    expect((await send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 3 } })).status).toBe(202);
    // JSON-RPC ids may be any number: a fractional one is echoed, as JSON-RPC 2.0 allows.
    expect((await send({ jsonrpc: '2.0', id: 1.5, method: 'ping' })).message).toEqual({ jsonrpc: '2.0', id: 1.5, result: {} });
  });

  it('2026-07-28: a _meta without the revision or the client capabilities is -32602 (400); params are checked as in the session era', async () => {
    const list = modern('tools/list');
    const headers = { ...auth, ...list.headers };
    const capabilities = 'io.modelcontextprotocol/clientCapabilities';
    for (const [meta, detail] of [
      [{ 'io.modelcontextprotocol/protocolVersion': '2026-07-28' }, `params._meta["${capabilities}"] must be an object`],
      [{ 'io.modelcontextprotocol/protocolVersion': '2026-07-28', [capabilities]: 'all' }, `params._meta["${capabilities}"] must be an object`],
      [{ 'io.modelcontextprotocol/protocolVersion': 20260728, [capabilities]: {} }, 'params._meta["io.modelcontextprotocol/protocolVersion"] must be a string'],
    ] as const) {
      const res = await rpc(p, 'demo', { ...list.body, params: { _meta: meta } }, headers);
      expect([res.status, res.json.error.code], detail).toEqual([400, -32602]);
      expect(res.json.error.message, detail).toContain(detail);
    }
    const call = modern('tools/call', { name: 'calc_add', arguments: [1] });
    const res = await rpc(p, 'demo', call.body, { ...auth, ...call.headers });
    expect([res.status, res.message.error]).toEqual([200, { code: -32602, message: 'Invalid params: params.arguments must be an object' }]);
  });
});
