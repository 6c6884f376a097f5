import { DefaultAgentCardResolver } from '@a2a-js/sdk/client';
import { fetch as undiciFetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliAgent } from '../../bin/cli/http-agent.ts';
import { agentCard } from '../../edge/a2a/index.ts';
import { a2aCall, agentHost, agentOrigin, bearer, request } from '../helpers/a2a.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

const EXT_BASE = 'https://github.com/platform/agent-platform';

describe('agent card', () => {
  let p: TestPlatform;
  let agentId: string;

  beforeAll(async () => {
    p = await startTestPlatform();
    agentId = (await p.node.services.store.agents.byHandle('demo'))!.id;
    await p.node.services.admin.createAgent({ account: p.node.demo!.accountId, handle: 'quiet', name: 'Quiet agent' });
  });
  afterAll(() => p.close());

  const getCard = (handle = 'demo', headers: Record<string, string> = {}) => p.call('GET', '/.well-known/agent-card.json', { host: agentHost(p, handle), headers });

  it('[A2A-CARD-01] [A2A-AUTH-12] [SURF-03] is served at agent-{handle}.<domain> without a credential', async () => {
    const res = await getCard();
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.json.name).toBe('Demo agent');
  });

  it('[A2A-CARD-02] [A2A-CARD-03] [A2A-CARD-04] [A2A-CARD-05] [A2A-CARD-06] [A2A-CARD-07] [A2A-CARD-08] [A2A-CARD-09] [A2A-CARD-10] [A2A-CARD-11] [A2A-CARD-12] [A2A-EXT-06] [A2A-EXT-07] [VERS-03] holds exactly the fields of the spec table', async () => {
    const { json } = await getCard();
    expect(json).toEqual({
      name: 'Demo agent',
      description: 'The demo tenant agent',
      supportedInterfaces: [{ url: agentOrigin(p), protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
      provider: { organization: 'Platform', url: EXT_BASE },
      version: '1.0.0',
      capabilities: {
        streaming: true,
        pushNotifications: true,
        extensions: [
          { uri: `${EXT_BASE}/ext/a2ui/v1`, description: expect.any(String), required: false },
          { uri: `${EXT_BASE}/ext/approval-gate/v1`, description: expect.any(String), required: false },
        ],
      },
      securitySchemes: { bearer: { httpAuthSecurityScheme: { scheme: 'Bearer', description: expect.any(String) } } },
      securityRequirements: [{ bearer: [] }],
      defaultInputModes: ['text/plain'],
      defaultOutputModes: ['text/plain'],
      skills: [],
    });
  });

  it('[A2A-CARD-13] [A2A-CARD-14] [A2A-CARD-15] omits documentationUrl, iconUrl, signatures, extendedAgentCard, tools and models, and holds no null anywhere', async () => {
    const { json, text } = await getCard();
    for (const key of ['documentationUrl', 'iconUrl', 'signatures', 'tools', 'models', 'maxTokens']) expect(json, key).not.toHaveProperty(key);
    expect(json.capabilities).not.toHaveProperty('extendedAgentCard');
    expect(text).not.toContain('null');
    // An agent created without a description still has the required member, as an empty string, not null.
    const quiet = await getCard('quiet');
    expect(quiet.json.description).toBe('');
    expect(quiet.text).not.toContain('null');
  });

  it('[A2A-CARD-01] carries Cache-Control with max-age and a strong ETag; If-None-Match answers 304 without a body', async () => {
    const first = await getCard();
    expect(first.headers['cache-control']).toMatch(/max-age=\d+/);
    const etag = first.headers.etag as string;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    expect((await getCard()).headers.etag).toBe(etag);
    for (const inm of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const again = await getCard('demo', { 'if-none-match': inm });
      expect([again.status, again.text], inm).toEqual([304, '']);
      expect(again.headers.etag).toBe(etag);
      expect(again.headers['cache-control']).toBe(first.headers['cache-control']);
    }
    expect((await getCard('demo', { 'if-none-match': '"stale"' })).status).toBe(200);
    // Each agent's card is its own: another agent has another validator.
    expect((await getCard('quiet')).headers.etag).not.toBe(etag);
  });

  it('[SURF-04] [SURF-05] an unknown handle, or the agent UUID in the host, gets the surface 404 with a JSON-RPC error body', async () => {
    for (const host of [agentHost(p, 'nobody'), agentHost(p, agentId)]) {
      const res = await p.call('GET', '/.well-known/agent-card.json', { host });
      expect(res.status, host).toBe(404);
      expect(res.json).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600, data: [{ reason: 'NOT_FOUND', metadata: { code: 'A2A_UNKNOWN_AGENT' } }] } });
    }
  });

  it('[A2A-RPC-04] serves no REST-shaped task routes', async () => {
    for (const [method, path] of [['GET', '/tasks/t1'], ['POST', '/tasks'], ['GET', '/v1/tasks'], ['POST', '/message:send'], ['GET', '/agent-card.json']] as const) {
      const res = await p.call(method, path, { host: agentHost(p), headers: bearer(p.node.demo!.serviceKey) });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.json.error.data[0].metadata.code).toBe('A2A_ROUTE_NOT_FOUND');
    }
  });

  it('[A2A-CARD-16] GetExtendedAgentCard returns the same card as the well-known route', async () => {
    const res = await a2aCall(p, request('GetExtendedAgentCard'), { headers: bearer(p.node.demo!.serviceKey) });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ jsonrpc: '2.0', id: 1, result: (await getCard()).json });
  });

  it('[A2A-CARD-04] [A2A-CARD-12] the official client resolves the card; it reads the spec form of securityRequirements as no requirement', async () => {
    const resolver = new DefaultAgentCardResolver({ fetchImpl: ((url: string, init?: object) => undiciFetch(url, { ...init, dispatcher: cliAgent } as never)) as unknown as typeof fetch });
    const card = await resolver.resolve(agentOrigin(p));
    expect(card.name).toBe('Demo agent');
    expect(card.version).toBe('1.0.0');
    expect(card.supportedInterfaces).toEqual([expect.objectContaining({ url: agentOrigin(p), protocolBinding: 'JSONRPC', protocolVersion: '1.0' })]);
    expect(card.capabilities?.streaming).toBe(true);
    expect(card.capabilities?.extensions.map((e) => e.uri)).toEqual([`${EXT_BASE}/ext/a2ui/v1`, `${EXT_BASE}/ext/approval-gate/v1`]);
    expect(card.securitySchemes.bearer?.scheme?.$case).toBe('httpAuthSecurityScheme');
    // The documented difference (README, agent gateways): ProtoJSON would be [{schemes: {bearer: {list: []}}}].
    expect(card.securityRequirements).toEqual([{ schemes: {} }]);
  });

  it('[A2A-CARD-14] the card builder leaves nothing unset as null', () => {
    const card = agentCard({ name: 'n', description: '' }, 'https://agent-x.example.com');
    const nulls = JSON.stringify(card, (_k, v) => (v === null ? '<null>' : v));
    expect(nulls).not.toContain('<null>');
  });

  it("[A2A-AUTH-12] a suspended account's agent serves nothing, its card included, until the account is resumed", async () => {
    const { admin } = p.node.services;
    await admin.suspendAccount({ account: p.node.demo!.accountId });
    try {
      const card = await getCard();
      expect(card.status).toBe(403);
      expect(card.json.error.data[0].metadata.code).toBe('PLT_ACCOUNT_SUSPENDED');
      const rpc = await a2aCall(p, request('GetExtendedAgentCard'), { headers: bearer(p.node.demo!.serviceKey) });
      expect(rpc.status).toBe(403);
    } finally {
      await admin.resumeAccount({ account: p.node.demo!.accountId });
    }
    expect((await getCard()).status).toBe(200);
  });
});
