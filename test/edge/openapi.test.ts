import { readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { Ajv } from 'ajv';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATEGORY_STATUS } from '../../edge/index.ts';
import { managementApp } from '../../edge/management/index.ts';
import { ROOT } from '../helpers/cli.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

type Operation = { operationId?: string; security?: Record<string, string[]>[]; parameters?: any[]; requestBody?: any; responses: Record<string, any> };

/** `METHOD /path` of every route in a fastify route tree (`printRoutes`); HEAD routes are GET's shadows. */
function routesOf(tree: string): string[] {
  const out: string[] = [];
  const stack: string[] = [];
  for (const line of tree.split('\n')) {
    const m = /^([│ ]*)[├└]── (\S+)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!m) continue;
    stack.length = m[1]!.length / 4;
    stack.push(m[2]!);
    for (const method of (m[3] ?? '').split(', ')) if (method && method !== 'HEAD') out.push(`${method} ${stack.join('')}`);
  }
  return out.sort();
}

/** The routes that are not part of the tenant API: browser pages, the operator channel and the operator's metrics. */
const HIDDEN = ['GET /device', 'POST /device', 'POST /device/decision', 'GET /viz', 'GET /viz/app.js', 'POST /_operator/admin', 'GET /metrics'];
const PUBLIC = ['GET /healthz', 'GET /readyz', 'GET /v1/platform-cli/config', 'GET /v1/openapi.json', 'POST /oauth/device/authorize', 'POST /oauth/token', 'GET /v1/files/:id/content'];

describe('the OpenAPI document of the management API', () => {
  let p: TestPlatform;
  let served: Awaited<ReturnType<TestPlatform['call']>>;
  let doc: { openapi: string; info: { title: string; version: string }; servers: { url: string }[]; paths: Record<string, Record<string, Operation>>; components: any };
  let registered: string[];
  let ajv: Ajv;
  const operations = () => Object.entries(doc.paths).flatMap(([route, ops]) => Object.entries(ops).map(([method, op]) => ({ key: `${method.toUpperCase()} ${route}`, route, method, op })));
  /** Checks a body against a schema of the document, by its JSON pointer (refs to components resolve in the document). */
  const conforms = (pointer: string, body: unknown) => {
    const validate = ajv.getSchema(`doc#${pointer}`) ?? ajv.compile({ $ref: `doc#${pointer}` });
    return validate(body) ? null : JSON.stringify(validate.errors);
  };

  beforeAll(async () => {
    p = await startTestPlatform();
    served = await p.call('GET', '/v1/openapi.json');
    doc = served.json;
    // A second app over the same services: its route tree is what fastify registered.
    const app = await managementApp({ services: p.node.services, logger: pino({ level: 'silent' }), serverFactory: (h) => http.createServer(h), operatorToken: 'unused', state: { draining: false } });
    registered = routesOf(app.printRoutes({ commonPrefix: false }));
    await app.close();
    ajv = new Ajv({ strict: false, validateFormats: false });
    ajv.addSchema(doc, 'doc');
  });
  afterAll(() => p.close());

  it('is served at GET /v1/openapi.json without a credential, as OpenAPI 3.1.0 naming the API and its base URL', () => {
    expect(served.status).toBe(200);
    expect(served.headers['content-type']).toMatch(/^application\/json/);
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.title).toBe('Agent platform management API');
    expect(doc.info.version).toBe(JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version);
    expect(doc.servers).toEqual([{ url: p.node.services.urls.api }]);
  });

  it('lists every route fastify registered with its methods, except the browser pages and the operator channel', () => {
    const documented = operations().map((o) => o.key.replace(/\{(\w+)\}/g, ':$1')).sort();
    expect(HIDDEN.every((r) => registered.includes(r))).toBe(true);
    expect(documented).toEqual(registered.filter((r) => !HIDDEN.includes(r)));
    expect(documented).toContain('GET /v1/capabilities');
    expect(documented).toContain('POST /v1/capabilities/upload');
    expect(new Set(operations().map((o) => o.op.operationId)).size).toBe(documented.length);
  });

  it('[MGMT-ERR-03] [MGMT-ERR-04] declares each operation\'s success and error answers, every error with the ManagementError body', () => {
    const statuses = new Set<number>(Object.values(CATEGORY_STATUS));
    for (const { key, op } of operations()) {
      const codes = Object.keys(op.responses).map(Number);
      // One success answer: a 2xx, or the redirect of a route whose answer is a redirect (GET /v1/files/{id}).
      expect(codes.filter((c) => c >= 200 && c < 400), key).toHaveLength(1);
      expect(codes, key).toContain(500);
      for (const code of codes.filter((c) => c >= 400)) {
        expect(statuses.has(code), `${key} ${code}`).toBe(true);
        expect(op.responses[code].content, `${key} ${code}`).toEqual({ 'application/json': { schema: { $ref: '#/components/schemas/ManagementError' } } });
        expect(op.responses[code].description, `${key} ${code}`).toMatch(/Category `[a-z_]+`/);
      }
    }
    const error = doc.components.schemas.ManagementError;
    expect(error.required).toEqual(['category', 'code', 'message']);
    expect(Object.keys(error.properties)).toEqual(['category', 'code', 'message', 'problems', 'error']);
    expect(error.properties.category.enum).toEqual(Object.keys(CATEGORY_STATUS));
    const responses = (key: string) => Object.keys(operations().find((o) => o.key === key)!.op.responses);
    expect(responses('GET /v1/capabilities')).toEqual(['200', '400', '403', '500', '503']);
    expect(responses('POST /v1/capabilities/upload')).toEqual(['200', '400', '403', '413', '415', '500', '503']);
    expect(responses('POST /oauth/token')).toEqual(['200', '400', '403', '413', '415', '500', '503']);
    expect(responses('GET /v1/capabilities/{id}')).toEqual(['200', '400', '403', '404', '500', '503']);
  });

  it('[SURF-25] sends no events: no operation answers with a stream (but the statechart viewer\'s inspection stream, a debugging view its caller opens), and asking for one still gets JSON', async () => {
    const streams = operations().filter(({ op }) => (Object.values(op.responses) as { content?: Record<string, unknown> }[]).some((r) => Object.hasOwn(r.content ?? {}, 'text/event-stream')));
    expect(streams.map((o) => o.key)).toEqual(['POST /v1/viz/watch']);
    const res = await p.call('GET', '/v1/workflow-runs', { headers: { authorization: `Bearer ${p.node.demo!.userKey}`, accept: 'text/event-stream' } });
    expect(res.headers['content-type']).toMatch(/^application\/json/);
  });

  it('[MGMT-AUTH-04] names the four credential header forms; routes that need one list all four, the others none', () => {
    expect(doc.components.securitySchemes).toEqual({
      bearer: { type: 'http', scheme: 'bearer', description: expect.any(String) },
      authorizationApiKey: { type: 'http', scheme: 'ApiKey', description: expect.any(String) },
      apiKeyHeader: { type: 'apiKey', in: 'header', name: 'API-Key', description: expect.any(String) },
      xApiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: expect.any(String) },
    });
    for (const { key, op } of operations()) {
      if (PUBLIC.includes(key.replace(/\{(\w+)\}/g, ':$1'))) expect(op.security, key).toEqual([]);
      else expect(op.security, key).toEqual([{ bearer: [] }, { authorizationApiKey: [] }, { apiKeyHeader: [] }, { xApiKeyHeader: [] }]);
    }
  });

  it('[MGMT-ERR-05] each operation answers as documented: 403 without a credential where it needs one, and only statuses and bodies its document lists', async () => {
    const key = p.node.demo!.userKey;
    const url = (route: string) => route.replace('{id}', '00000000-0000-4000-8000-000000000000').replace('{version}', '1').replace('{kind}', 'account').replace('{agent_id}', '00000000-0000-4000-8000-000000000000').replace('{principal_id}', '00000000-0000-4000-8000-000000000000');
    for (const { key: name, route, method, op } of operations()) {
      const send = (headers: Record<string, string>) => p.call(method.toUpperCase() as 'GET' | 'POST' | 'PUT', url(route), { headers, ...(method === 'post' || method === 'put' ? { json: {} } : {}) });
      const anonymous = await send({});
      if (op.security!.length > 0) {
        expect([anonymous.status, anonymous.json.code], name).toEqual([403, 'MGMT_CREDENTIAL_MISSING']);
      } else {
        expect(anonymous.json?.code, name).not.toBe('MGMT_CREDENTIAL_MISSING');
      }
      for (const res of [anonymous, await send({ authorization: `Bearer ${key}` })]) {
        expect(Object.keys(op.responses), `${name} answered ${res.status}`).toContain(String(res.status));
        const pointer = `/paths/${route.replaceAll('/', '~1')}/${method}/responses/${res.status}/content/application~1json/schema`;
        expect(conforms(pointer, res.json), `${name} ${res.status}`).toBeNull();
      }
    }
  });

  it('[CAP-17] [CAP-21] [CAP-22] [CAP-23] documents the list parameters as the route enforces them', async () => {
    const list = operations().find((o) => o.key === 'GET /v1/capabilities')!.op;
    const param = (name: string) => list.parameters!.find((x) => x.name === name);
    expect(list.parameters!.map((x) => [x.in, x.name, x.required])).toEqual([
      ['query', 'type', false],
      ['query', 'namespace', false],
      ['query', 'limit', false],
      ['query', 'offset', false],
      ['query', 'search', false],
    ]);
    expect(param('type').schema.enum).toEqual(['plugin', 'builtin', 'connector']);
    expect(param('limit').schema).toMatchObject({ type: 'integer', minimum: 1, maximum: 100, default: 20 });
    expect(param('offset').schema).toMatchObject({ type: 'integer', minimum: 0, maximum: 1_000_000, default: 0 });
    expect(param('search').schema).toMatchObject({ type: 'string', maxLength: 200 });
    const auth = { authorization: `Bearer ${p.node.demo!.userKey}` };
    for (const [query, field] of [['limit=101', 'limit'], ['offset=1000001', 'offset'], [`search=${'s'.repeat(201)}`, 'search'], ['search=a%00b', 'search']]) {
      const res = await p.call('GET', `/v1/capabilities?${query}`, { headers: auth });
      expect([res.status, res.json.code], query).toEqual([400, 'MGMT_INVALID_QUERY']);
      expect(res.json.message, query).toMatch(new RegExp(`^invalid query parameter: ${field} `));
    }
    expect((await p.call('GET', '/v1/capabilities', { headers: auth })).json.data).toMatchObject({ limit: 20, offset: 0 });
  });

  it('[DEVICE-01] [DEVICE-05] documents the request bodies: the token and authorize JSON or form fields, the upload form with its archive file', () => {
    const op = (key: string) => operations().find((o) => o.key === key)!.op;
    const token = op('POST /oauth/token').requestBody;
    expect(Object.keys(token.content)).toEqual(['application/json', 'application/x-www-form-urlencoded']);
    expect(token.content['application/json'].schema.required).toEqual(['grant_type', 'code', 'client_id']);
    expect(op('POST /oauth/device/authorize').requestBody.content['application/json'].schema.required).toEqual(['client_id']);
    const upload = op('POST /v1/capabilities/upload').requestBody;
    expect(upload.required).toBe(true);
    expect(upload.content['multipart/form-data'].schema).toMatchObject({ type: 'object', required: ['archive'], properties: { archive: { type: 'string', format: 'binary' } } });
    expect(op('POST /v1/viz/watch').responses[200].content['text/event-stream'].schema.required).toEqual(['address', 'value', 'activeStateIds', 'at']);
  });

  it('names the spec\'s resources as components, and every reference resolves', () => {
    expect(Object.keys(doc.components.schemas).sort()).toEqual(['ApprovalGate', 'Attachment', 'AutonomyDecision', 'AutonomyPolicy', 'BuiltinSpecifications', 'Capability', 'ConnectorSpecifications', 'DeviceAuthorization', 'IdentityLink', 'JournalEntry', 'ManagementError', 'PluginBuild', 'PluginSpecifications', 'PluginUploadResult', 'Schedule', 'Skill', 'TokenResponse', 'Trigger', 'Workflow', 'WorkflowRun']);
    const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"([^"]+)"/g)].map((m) => m[1]!);
    expect(refs.length).toBeGreaterThan(0);
    for (const ref of new Set(refs)) expect(doc.components.schemas[ref.replace('#/components/schemas/', '')], ref).toBeDefined();
    // A capability's specifications are one of three named shapes (a generated client gets a type for each).
    expect(doc.components.schemas.Capability.properties.specifications.anyOf.map((s: { $ref: string }) => s.$ref)).toEqual(
      ['PluginSpecifications', 'BuiltinSpecifications', 'ConnectorSpecifications'].map((n) => `#/components/schemas/${n}`),
    );
    // account_id is on plugins and connectors only: built-ins belong to the platform.
    expect(doc.components.schemas.Capability.required).toEqual(['id', 'name', 'description', 'namespace', 'type', 'is_active', 'active_version', 'logo_url', 'specifications', 'audit_info']);
    expect(doc.components.schemas.TokenResponse.required).toEqual(['access_token', 'token_type', 'expires_in', 'scope']);
  });
});
