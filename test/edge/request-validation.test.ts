import http from 'node:http';
import pino from 'pino';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATOR_TOKEN_HEADER } from '../../edge/index.ts';
import { managementApp } from '../../edge/management/index.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

/** The management routes' schemas, enforced: what a request that fails one is answered. */
describe('management request validation', () => {
  let p: TestPlatform;
  let auth: Record<string, string>;

  beforeAll(async () => {
    p = await startTestPlatform();
    auth = { authorization: `Bearer ${p.node.demo!.userKey}` };
  });
  afterAll(() => p.close());

  it('[MGMT-ERR-05] settles who is calling before what is asked: an invalid query without a credential is 403', async () => {
    const res = await p.call('GET', '/v1/capabilities?limit=101&search=a%00b');
    expect([res.status, res.json.code]).toEqual([403, 'MGMT_CREDENTIAL_MISSING']);
    const watch = await p.call('POST', '/v1/viz/watch', { json: { address: 7 } });
    expect([watch.status, watch.json.code]).toEqual([403, 'MGMT_CREDENTIAL_MISSING']);
  });

  it('[MGMT-ERR-04] names the field at fault, in each part of the request', async () => {
    const query = await p.call('GET', '/v1/capabilities?type=skill', { headers: auth });
    expect(query.json).toEqual({ category: 'invalid_request', code: 'MGMT_INVALID_QUERY', message: 'invalid query parameter: type must be one of plugin, builtin, connector' });
    const nul = await p.call('GET', '/v1/capabilities?namespace=a%00b', { headers: auth });
    expect(nul.json.message).toBe('invalid query parameter: namespace must not contain NUL characters');
    const missing = await p.call('POST', '/oauth/token', { json: { grant_type: 'urn:ietf:params:oauth:grant-type:device_code', code: 'abc' } });
    expect(missing.json).toEqual({ category: 'invalid_request', code: 'MGMT_INVALID_BODY', message: 'malformed request body: client_id is required' });
    const empty = await p.call('POST', '/oauth/token', { json: { grant_type: 'urn:ietf:params:oauth:grant-type:device_code', code: '', client_id: 'c' } });
    expect(empty.json.message).toBe('malformed request body: code must not be empty');
    const notObject = await p.call('POST', '/oauth/device/authorize', { json: ['cli'] });
    expect(notObject.json.message).toBe('malformed request body: must be a JSON object');
  });

  it('[DEVICE-01] keeps a JSON body\'s own types: a number is not read as a string', async () => {
    const res = await p.call('POST', '/oauth/device/authorize', { json: { client_id: 42 } });
    expect([res.status, res.json.code, res.json.message]).toEqual([400, 'MGMT_INVALID_BODY', 'malformed request body: client_id must be string']);
    const watch = await p.call('POST', '/v1/viz/watch', { json: { address: ['account/a/b'] }, headers: auth });
    expect([watch.status, watch.json.code]).toEqual([400, 'MGMT_INVALID_BODY']);
    // A query string is text: its integers are read as integers.
    expect((await p.call('GET', '/v1/capabilities?limit=3&offset=2', { headers: auth })).json.data).toMatchObject({ limit: 3, offset: 2 });
  });

  it('answers a path id that cannot exist with the route\'s own not-found code', async () => {
    const capability = await p.call('GET', '/v1/capabilities/not-a-uuid', { headers: auth });
    expect([capability.status, capability.json.code, capability.json.message]).toEqual([404, 'MGMT_CAPABILITY_NOT_FOUND', 'no such capability in this account: id must be a UUID']);
    // The uuid format alone would take a URN; the pattern does not.
    const urn = await p.call('GET', '/v1/capabilities/urn:uuid:00000000-0000-4000-8000-000000000000', { headers: auth });
    expect([urn.status, urn.json.code]).toEqual([404, 'MGMT_CAPABILITY_NOT_FOUND']);
    const version = await p.call('POST', '/v1/capabilities/00000000-0000-4000-8000-000000000000/versions/0/activate', { headers: auth });
    expect([version.status, version.json.code]).toEqual([404, 'PLUGIN_VERSION_NOT_FOUND']);
    const machine = await p.call('GET', '/v1/viz/machines/widget', { headers: auth });
    expect([machine.status, machine.json.code]).toEqual([404, 'MGMT_STATECHART_NOT_FOUND']);
    expect(machine.json.message).toMatch(/^no statechart of that kind: kind must be one of .*account/);
  });

  it('answers the OAuth routes with no-store, errors included', async () => {
    const res = await p.call('POST', '/oauth/token', { json: {} });
    expect(res.status).toBe(400);
    expect([res.headers['cache-control'], res.headers.pragma]).toEqual(['no-store', 'no-cache']);
  });
});

describe('the operator channel', () => {
  let p: TestPlatform;
  let app: FastifyInstance;
  const TOKEN = 'operator-token-for-this-test';
  const admin = (payload: unknown, token = TOKEN) => app.inject({ method: 'POST', url: '/_operator/admin', headers: { [OPERATOR_TOKEN_HEADER]: token }, payload: payload as object });

  beforeAll(async () => {
    p = await startTestPlatform({ seed: false });
    app = await managementApp({ services: p.node.services, logger: pino({ level: 'silent' }), serverFactory: (h) => http.createServer(h), operatorToken: TOKEN, state: { draining: false } });
  });
  afterAll(async () => {
    await app.close();
    await p.close();
  });

  it('is a 404 to a caller without the token, whatever its body', async () => {
    for (const payload of [{}, { command: 7 }, { command: 'account.create' }]) {
      const res = await admin(payload, 'wrong-token-of-the-same-length-xx');
      expect([res.statusCode, res.json().code], JSON.stringify(payload)).toEqual([404, 'MGMT_ROUTE_NOT_FOUND']);
    }
  });

  it('answers a body that fails its schema in the CLI\'s own error format', async () => {
    for (const [payload, message] of [
      [{}, 'malformed request body: command is required'],
      [{ command: 7 }, 'malformed request body: command must be string'],
      [{ command: 'account.create', params: [] }, 'malformed request body: params must be object'],
    ] as const) {
      const res = await admin(payload);
      expect([res.statusCode, res.json()], JSON.stringify(payload)).toEqual([400, { error: { code: 'MGMT_INVALID_BODY', message } }]);
    }
  });

  it('runs a command whose body passes', async () => {
    const created = await admin({ command: 'account.create', params: { name: 'Operator Test' } });
    expect(created.statusCode).toBe(200);
    const { id } = created.json().result;
    expect((await p.node.services.store.accounts.get(id))?.name).toBe('Operator Test');
  });
});
