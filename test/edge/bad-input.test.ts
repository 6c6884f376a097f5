import net from 'node:net';
import { FormData, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountAddress, distinctKeys, registerUpload, versionOutcome, type Caller } from '../../runtime/index.ts';
import { buildComponent, CALC_WAT, CALC_WIT } from '../helpers/components.ts';
import { ACCEPT_BOTH, CALC_WAT as MCP_CALC_WAT, CALC_WIT as MCP_CALC_WIT, callerOf, createGateway, host, openSession, rpc } from '../helpers/mcp.ts';
import { npack } from '../helpers/npack.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

/** Sends raw bytes and reads until the server closes (what an HTTP client that gets a parse error sees). */
function raw(port: number, bytes: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1', () => s.end(bytes));
    let out = '';
    s.on('data', (d) => (out += d.toString()));
    s.on('error', reject);
    s.on('close', () => resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(out)?.[1] ?? 0), body: out.slice(out.indexOf('\r\n\r\n') + 4) }));
  });
}

describe('bad input gets the surface\'s own 400-class error, never a 500', () => {
  let p: TestPlatform;
  let key: string;
  let owner: Caller;

  beforeAll(async () => {
    p = await startTestPlatform({ env: { PLATFORM_LANE_QUEUE: '1' } });
    key = p.node.demo!.userKey;
    owner = await callerOf(p, key);
    await p.node.services.admin.setBudget({ account: owner.accountId, credits: 1_000 });
  }, 60_000);
  afterAll(() => p.close());

  it('[MGMT-ERR-03] [MGMT-ERR-04] a NUL in a query parameter is 400 in the management format', async () => {
    const res = await p.call('GET', '/v1/capabilities?search=a%00b', { headers: { authorization: `Bearer ${key}` } });
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ category: 'invalid_request' });
    expect(res.json.code).toMatch(/^(PLT_INVALID_TEXT|MGMT_INVALID_QUERY)$/);
  });

  it('a NUL in the device page form, the OAuth routes, a registration body or a session header is a 400-class answer', async () => {
    const device = await p.call('POST', '/device', { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'user_code=AB%00CD&email=a%00@b.c&password=x' });
    expect(device.status).toBe(400);
    expect(device.text).toMatch(/unknown, expired or already used/);

    await createGateway(p, owner.accountId, 'nulgate', 'private-dcr');
    const form = (path: string, body: string) => p.call('POST', path, { host: host(p, 'nulgate'), headers: { 'content-type': 'application/x-www-form-urlencoded' }, body });
    const tokenRes = await form('/oauth/token', 'grant_type=client_credentials&client_id=a%00b&client_secret=x');
    expect([400, 401]).toContain(tokenRes.status);
    expect(tokenRes.json.error).toMatch(/^(invalid_request|invalid_client)$/);
    const authorize = await p.call('GET', '/oauth/authorize?client_id=a%00b&response_type=code', { host: host(p, 'nulgate') });
    expect(authorize.status).toBe(400);
    const registration = await p.call('POST', '/oauth/register', { host: host(p, 'nulgate'), json: { redirect_uris: ['https://client.example/cb\u0000'], client_name: 'nul\u0000name' } });
    expect(registration.status).toBe(400);
    expect(registration.json.error).toMatch(/^(invalid_request|invalid_redirect_uri|invalid_client_metadata)$/);

    const { headers } = await openSession(p, 'nulgate', { authorization: `Bearer ${key}` });
    const nulSession = await rpc(p, 'nulgate', { jsonrpc: '2.0', id: 3, method: 'ping' }, { ...headers, 'mcp-session-id': `=?base64?${Buffer.from('a\u0000b').toString('base64')}?=` });
    expect(nulSession.status).toBe(404);
    expect(nulSession.json.error.message).toMatch(/Session not found/);
  });

  it('a component whose names are not valid UTF-8 fails admission as 400, not 500', async () => {
    const wasm = Buffer.from(await buildComponent({ wit: CALC_WIT, world: 'calc', wat: CALC_WAT }));
    // Overwrite every "add" name (the export and its core counterparts) with bytes that are not UTF-8.
    const bad = Buffer.from(wasm);
    expect(bad.indexOf('add')).toBeGreaterThan(0);
    for (let i = bad.indexOf('add'); i >= 0; i = bad.indexOf('add', i + 1)) bad.set([0xff, 0xfe, 0xfd], i);
    const form = new FormData();
    form.append('archive', new Blob([await npack([{ name: 'calc.wasm', body: bad }])]), 'bad-names.npack');
    const res = await request(`${p.url}/v1/capabilities/upload`, { method: 'POST', headers: { host: 'api.localhost', authorization: `Bearer ${key}` }, body: form });
    const body = (await res.body.json()) as { category: string; code: string; message: string };
    expect(res.statusCode).toBe(400);
    expect(body).toMatchObject({ category: 'invalid_request', code: 'PLUGIN_WASM_INVALID' });
    expect(body.message).toMatch(/not valid UTF-8/);
  });

  it('a tenant flooding its lane gets the clear overload error on MCP, and pays only for the calls that ran', async () => {
    const wasm = await buildComponent({ wit: MCP_CALC_WIT.replace('package test:calc;', 'package test:floodcalc;'), world: 'calc', wat: MCP_CALC_WAT });
    const archive = await npack([{ name: 'p.wasm', body: Buffer.from(wasm) }, { name: 'platform.yaml', body: 'schema_version: "1.0"\nmetadata: { name: floodcalc }\nresources: { limits: { timeout: 300ms } }' }]);
    const up = await registerUpload(p.node.services, { accountId: owner.accountId, principalId: owner.principalId, filename: 'floodcalc.npack', archive });
    await versionOutcome(p.node.services, { accountId: owner.accountId, capabilityId: up.capability_id, version: 1 });
    const calc = up.capability_id;
    await createGateway(p, owner.accountId, 'flooded', 'private');
    await p.node.services.admin.bindGateway({ gateway: 'flooded', capability: calc });
    const { headers } = await openSession(p, 'flooded', { authorization: `Bearer ${key}` });
    const credits = async () => ((await p.node.services.actors.read(accountAddress(owner.accountId)))!.context as { credits: number }).credits;
    await p.node.services.billing.release();
    const before = await credits();
    const calls = await Promise.all(Array.from({ length: 12 }, (_, i) => rpc(p, 'flooded', { jsonrpc: '2.0', id: 100 + i, method: 'tools/call', params: { name: 'floodcalc_spin', arguments: {} } }, headers)));
    const refused = calls.filter((c) => c.message.error);
    const ran = calls.filter((c) => c.message.result);
    expect(refused.length).toBeGreaterThan(0);
    for (const r of refused) {
      expect(r.status).toBe(200);
      expect(r.message.error).toMatchObject({ code: -32003, data: { code: 'PLT_LANE_OVERLOADED', retryAfterSeconds: 1 } });
      expect(r.message.error.message).toMatch(/^Overloaded: /);
    }
    for (const r of ran) expect(r.message.result).toMatchObject({ isError: true });
    // Unspent credits go back with the node's lease: what is left was spent on the calls that ran, and only those.
    await p.node.services.billing.release();
    expect(before - (await credits())).toBe(ran.length);
  }, 60_000);

  it('bad URL encodings and over-long path segments are 400 in each surface\'s format', async () => {
    const badUrl = await p.call('GET', '/v1/capabilities/%E0%A4%A', { headers: { authorization: `Bearer ${key}` } });
    expect(badUrl.status).toBe(400);
    expect(badUrl.json).toMatchObject({ category: 'invalid_request', code: 'MGMT_INVALID_PATH' });
    const long = await p.call('GET', `/v1/capabilities/${'a'.repeat(300)}`, { headers: { authorization: `Bearer ${key}` } });
    expect(long.status).toBe(400);
    expect(long.json).toMatchObject({ category: 'invalid_request', code: 'MGMT_INVALID_PATH' });
    const mcp = await p.call('POST', '/%E0%A4%A', { host: host(p, 'nulgate'), headers: { accept: ACCEPT_BOTH, 'content-type': 'application/json' }, body: '{}' });
    expect(mcp.status).toBe(400);
    expect(mcp.json).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
  });

  it('requests Node\'s parser refuses, and a request with two Host headers, get the platform\'s JSON error', async () => {
    const garbled = await raw(p.port, 'GET /v1/capabilities HTTP/1.1\r\nHost: api.localhost\r\nnot a header line\r\n\r\n');
    expect(garbled.status).toBe(400);
    expect(JSON.parse(garbled.body)).toMatchObject({ category: 'invalid_request', code: 'EDGE_BAD_REQUEST' });
    const huge = await raw(p.port, `GET /v1/capabilities HTTP/1.1\r\nHost: api.localhost\r\nX-Big: ${'x'.repeat(20_000)}\r\n\r\n`);
    expect(huge.status).toBe(431);
    expect(JSON.parse(huge.body)).toMatchObject({ code: 'EDGE_BAD_REQUEST' });
    const twoHosts = await raw(p.port, `GET /healthz HTTP/1.1\r\nHost: api.localhost\r\nHost: mcp-nulgate.localhost\r\nConnection: close\r\n\r\n`);
    expect(twoHosts.status).toBe(400);
    expect(JSON.parse(twoHosts.body)).toMatchObject({ code: 'EDGE_BAD_REQUEST', message: 'the request has more than one Host header' });
  });

  it('a JSON-RPC id that is not a finite number is an invalid request, not an answer with a null id', async () => {
    const { headers } = await openSession(p, 'nulgate', { authorization: `Bearer ${key}` });
    const res = await rpc(p, 'nulgate', '{"jsonrpc":"2.0","id":1e400,"method":"ping"}', headers);
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request: id must be a string or a finite number' } });
  });
});

describe('cluster status', () => {
  it('counts each member and shard once, however often the listing repeats a key being rewritten', async () => {
    const kv = { keys: async () => (async function* () { yield* ['shard.1', 'shard.2', 'shard.1', 'shard.3', 'shard.2']; })() };
    expect(await distinctKeys(kv as never)).toEqual(['shard.1', 'shard.2', 'shard.3']);
  });

  it('gives a listing that stalls up at its deadline and stops it, instead of waiting for the consumer\'s 30 s heartbeat', async () => {
    // nats.js ends a key listing at its idle heartbeat when the entries it counted expired before delivery (a bucket
    // whose TTL is the lease): the shape of that listing, one key and then nothing until stopped.
    let stopped = false;
    let wake = () => {};
    const listing = {
      stop() {
        stopped = true;
        wake();
      },
      async *[Symbol.asyncIterator]() {
        yield 'node-1';
        await new Promise<void>((r) => (wake = r));
      },
    };
    const t0 = performance.now();
    await expect(distinctKeys({ keys: async () => listing } as never, 150)).rejects.toThrow('listing the keys of a cluster bucket took longer than 150 ms');
    expect(performance.now() - t0).toBeGreaterThanOrEqual(140);
    expect(performance.now() - t0).toBeLessThan(1_000);
    expect(stopped).toBe(true);
  });
});
