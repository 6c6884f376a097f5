import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { startSdkServer } from '../../bench/mcp-reference.ts';
import { sdkFetch } from '../helpers/a2a.ts';
import { call, rulesFile, userMessage } from '../helpers/agents.ts';
import { ROOT } from '../helpers/cli.ts';
import { PET_API_KEY, startPetApi, startRegistry } from '../helpers/pet-api.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

type Text = { type: string; text: string }[];

describe('REST and MCP registry connectors', () => {
  let p: TestPlatform;
  let api: Awaited<ReturnType<typeof startPetApi>>;
  let client: Client;
  let restId: string;
  const account = () => p.node.demo!.accountId;
  const admin = () => p.node.services.admin;

  beforeAll(async () => {
    api = await startPetApi();
    // The demo agent's rules, with one in front that reads a pet through the REST connector once it is bound.
    const rules = readFileSync(path.join(ROOT, 'runtime/models/demo-rules.yaml'), 'utf8').replace(
      /^rules:\n/m,
      'rules:\n  - when: { after_tool: pets_getPet }\n    reply: "Found {{result}}"\n  - when: { contains: look up pet, numbers: 1, tool: pets_getPet }\n    call: { tool: pets_getPet, arguments: { petId: "{{number.1}}" } }\n',
    );
    p = await startTestPlatform({ env: { PLATFORM_EGRESS_ALLOW_LOOPBACK: 'true', PLATFORM_SCRIPTED_RULES: await rulesFile(rules) } });
  }, 60_000);
  afterAll(async () => {
    await client?.close();
    await p?.close();
    await api?.close();
  });

  it('[CAP-16] a REST connector is made from an OpenAPI 3 document (YAML or JSON): one tool per operation, its credential sealed', async () => {
    const created = await admin().createConnector({ account: account(), kind: 'rest', name: 'Pet Store', namespace: 'pets', spec: api.spec, apiKey: PET_API_KEY });
    expect(created).toMatchObject({ kind: 'rest', namespace: 'pets', url: `${api.origin}/v1`, tools: ['listPets', 'createPet', 'getPet', 'delete_pets_petId'] });
    restId = created.id;
    const { rows } = await p.node.services.store.db.query<{ sealed_secret: Uint8Array }>('select sealed_secret from connectors where capability_id = $1', [restId]);
    expect(Buffer.from(rows[0]!.sealed_secret).includes(PET_API_KEY)).toBe(false);
    // The same document as JSON gives the same operations.
    const json = await admin().createConnector({ account: account(), kind: 'rest', name: 'Pets JSON', namespace: 'petsjson', spec: JSON.stringify(parseYaml(api.spec)), header: `X-Api-Key: ${PET_API_KEY}` });
    expect(json.tools).toEqual(created.tools);
    // Nothing reached the API while the connectors were made: their operations come from the document.
    expect(api.seen).toEqual([]);

    const caps = await p.call('GET', `/v1/capabilities/${restId}`, { headers: { authorization: `Bearer ${p.node.demo!.userKey}` } });
    expect(caps.status).toBe(200);
    expect(caps.json.data).toMatchObject({ id: restId, type: 'connector', namespace: 'pets', is_active: true, description: 'Pets of a small shop' });
    expect(caps.json.data.specifications).toEqual({
      type: 'connector',
      kind: 'rest',
      url: `${api.origin}/v1`,
      source: null,
      ttl_seconds: 300,
      tools: [
        { name: 'pets_listPets', description: 'List the pets' },
        { name: 'pets_createPet', description: 'Add a pet' },
        { name: 'pets_getPet', description: 'Read one pet' },
        { name: 'pets_delete_pets_petId', description: 'Remove a pet' },
      ],
    });
  });

  it('[CAP-16] a document that is not OpenAPI 3, does not validate, reaches outside itself or describes nothing is refused with the reason', async () => {
    const make = (spec: string, extra: Record<string, unknown> = {}) => admin().createConnector({ account: account(), kind: 'rest', name: 'Bad', spec, url: api.origin, ...extra }).catch((e: unknown) => e);
    expect(await make('{"swagger": "2.0"}')).toMatchObject({ code: 'ADMIN_INVALID', message: 'invalid OpenAPI document: an OpenAPI 3.0 or 3.1 document is expected (its "openapi" field names the version)' });
    expect(await make('openapi: [unclosed')).toMatchObject({ code: 'ADMIN_INVALID', message: expect.stringMatching(/^invalid OpenAPI document: neither JSON nor YAML/) });
    expect(await make('openapi: 3.0.3\ninfo: { title: x, version: "1" }\npaths: {}\n')).toMatchObject({ code: 'ADMIN_INVALID', message: 'invalid OpenAPI document: it describes no operation' });
    expect(await make('openapi: 3.0.3\npaths: {}\n')).toMatchObject({ code: 'ADMIN_INVALID', message: expect.stringMatching(/^invalid OpenAPI document: .*info/s) });
    const external = "openapi: 3.0.3\ninfo: { title: x, version: '1' }\npaths:\n  /a:\n    get:\n      responses: { '200': { $ref: 'https://example.com/r.yaml#/x' } }\n";
    expect(await make(external)).toMatchObject({ code: 'ADMIN_INVALID', message: 'invalid OpenAPI document: references outside the document are not followed (https://example.com/r.yaml#/x)' });
    expect(await make(api.spec.replace(/servers:\n  - url: \S+\n/, ''), { url: undefined })).toMatchObject({ code: 'ADMIN_INVALID', message: 'the document names no absolute server URL: give the base URL (--url)' });
    expect(await make(api.spec, { url: 'http://10.0.0.1/api' })).toMatchObject({ code: 'ADMIN_INVALID', message: expect.stringMatching(/^invalid base URL/) });
    expect(await make(api.spec.replace(/components:[\s\S]*?schemas:/, 'components:\n  schemas:'), { apiKey: 'k' })).toMatchObject({ code: 'ADMIN_INVALID', message: expect.stringMatching(/declares no API key/) });
    expect(await make('x'.repeat(4 * 1024 * 1024 + 1))).toMatchObject({ code: 'ADMIN_INVALID', message: 'invalid OpenAPI document: larger than 4 MiB' });
    // Every refusal left nothing behind.
    const caps = await p.call('GET', '/v1/capabilities?type=connector', { headers: { authorization: `Bearer ${p.node.demo!.userKey}` } });
    expect(caps.json.data.capabilities.map((c: any) => c.namespace).sort()).toEqual(['pets', 'petsjson']);
  });

  it('[MCP-TOOLS-04] [CAP-16] bound to a gateway, the MCP SDK client lists its operations with their schemas and calls the API through egress with the key', async () => {
    await admin().bindGateway({ gateway: 'demo', capability: restId });
    client = new Client({ name: 'rest-connector-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${p.node.demo!.gatewayUrl}/`), { fetch: sdkFetch(p.node.demo!.userKey) }));
    const tools = (await client.listTools()).tools.filter((t) => t.name.startsWith('pets_'));
    expect(tools.map((t) => t.name)).toEqual(['pets_listPets', 'pets_createPet', 'pets_getPet', 'pets_delete_pets_petId']);
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    expect(byName.pets_listPets!.inputSchema).toEqual({
      type: 'object',
      properties: { limit: { type: 'integer', minimum: 1, description: 'How many at most' }, tag: { type: 'array', items: { type: 'string' } } },
    });
    expect(byName.pets_listPets!.annotations?.readOnlyHint).toBe(true);
    expect(byName.pets_getPet!.inputSchema).toMatchObject({ properties: { petId: { type: 'integer' }, 'X-Trace': { type: 'string' } }, required: ['petId'] });
    // The recursive Pet schema, expanded in place: its self-reference becomes "any value", so the schema is finite.
    expect(byName.pets_createPet!.inputSchema).toEqual({
      type: 'object',
      properties: { body: { type: 'object', required: ['name'], properties: { id: { type: 'integer' }, name: { type: 'string', maxLength: 50 }, tags: { type: 'array', items: { type: 'string' } }, parent: {} } } },
      required: ['body'],
    });

    const listed = await client.callTool({ name: 'pets_listPets', arguments: { limit: 5, tag: ['cat', 'bird'] } });
    expect(listed.isError).toBe(false);
    // MCP structured content is an object: a JSON array answer comes as {result: [...]}.
    expect(listed.structuredContent).toEqual({ result: [{ id: 2, name: 'Tom', tags: ['cat'] }] });
    expect(api.seen.at(-1)).toMatchObject({ method: 'GET', url: '/v1/pets?limit=5&tag=cat&tag=bird', key: PET_API_KEY });

    const one = await client.callTool({ name: 'pets_getPet', arguments: { petId: 1, 'X-Trace': 't-1' } });
    expect(JSON.parse((one.content as Text)[0]!.text)).toEqual({ id: 1, name: 'Rex', tags: ['dog'] });
    expect(api.seen.at(-1)).toMatchObject({ url: '/v1/pets/1', trace: 't-1', key: PET_API_KEY });

    const made = await client.callTool({ name: 'pets_createPet', arguments: { body: { name: 'Kit', tags: ['cat'] } } });
    expect(JSON.parse((made.content as Text)[0]!.text)).toEqual({ name: 'Kit', tags: ['cat'], id: 3 });
    expect(api.seen.at(-1)).toMatchObject({ method: 'POST', url: '/v1/pets', body: '{"name":"Kit","tags":["cat"]}' });
  });

  it('[CAP-16] bound to the demo agent, its model calls an operation over A2A and answers from the API', async () => {
    await admin().bindAgent({ agent: 'demo', capability: restId });
    const r = await call(p, 'SendMessage', { message: userMessage('look up pet 2 please') });
    const task = r.json.result.task;
    expect(task?.status.state, JSON.stringify(r.json)).toBe('TASK_STATE_COMPLETED');
    expect(task.artifacts[0].parts[0].text).toBe('Found {"id":2,"name":"Tom","tags":["cat"]}');
    expect(api.seen.at(-1)).toMatchObject({ method: 'GET', url: '/v1/pets/2', key: PET_API_KEY });
  });

  it('[CAP-16] an API error, a bad argument and an unreachable API are tool errors that say which; path values are encoded, never spliced', async () => {
    const missing = await client.callTool({ name: 'pets_getPet', arguments: { petId: 99 } });
    expect(missing.isError).toBe(true);
    expect((missing.content as Text)[0]!.text).toContain('GET /pets/{petId} answered 404: {"error":"no pet 99"}');
    const sneaky = await client.callTool({ name: 'pets_getPet', arguments: { petId: '1/../../admin?x=' } });
    expect(sneaky.isError).toBe(true);
    expect(api.seen.at(-1)!.url).toBe('/v1/pets/1%2F..%2F..%2Fadmin%3Fx%3D');
    const noId = await client.callTool({ name: 'pets_getPet', arguments: {} });
    expect(noId.isError).toBe(true);
    expect((noId.content as Text)[0]!.text).toContain('the argument petId is required');
    const header = await client.callTool({ name: 'pets_getPet', arguments: { petId: 1, 'X-Trace': 'a\r\nX-Api-Key: stolen' } });
    expect((header.content as Text)[0]!.text).toContain('the argument X-Trace may not contain line breaks');
    const removed = await client.callTool({ name: 'pets_delete_pets_petId', arguments: { petId: 3 } });
    expect(removed.isError).toBe(false);
    await api.close();
    const down = await client.callTool({ name: 'pets_listPets', arguments: {} });
    expect(down.isError).toBe(true);
    expect((down.content as Text)[0]!.text).toContain('the API of connector Pet Store failed');
  });

  it('[CAP-16] an MCP registry server: the operator names it in a registry speaking GET /v0/servers, and it becomes a custom MCP connector', async () => {
    const upstream = await startSdkServer({
      token: 'reg-token',
      register: (mcp) => mcp.registerTool('forecast', { description: 'The weather of a city', inputSchema: { city: z.string() } }, async ({ city }) => ({ content: [{ type: 'text', text: `${city}: sunny` }] })),
    });
    const registry = await startRegistry([
      { name: 'io.example/alpha', description: 'A', version: '1.0.0', packages: [{ registryType: 'npm', identifier: 'alpha' }] },
      { name: 'io.example/beta', description: 'B', version: '1.0.0', remotes: [{ type: 'sse', url: 'https://beta.example/sse' }] },
      { name: 'io.example/weather', description: 'Weather for a city', version: '2.1.0', remotes: [{ type: 'streamable-http', url: `${upstream.origin}/mcp`, headers: [{ name: 'Authorization', isRequired: true, isSecret: true }] }] },
    ]);
    try {
      const make = (server: string, header?: string) => admin().createConnector({ account: account(), kind: 'registry', name: server.split('/')[1]!, url: registry.url, server, ...(header ? { header } : {}) }).catch((e: unknown) => e);
      expect(await make('io.example/none')).toMatchObject({ code: 'ADMIN_NOT_FOUND', message: `the registry at ${registry.url} lists no server named io.example/none` });
      expect(await make('io.example/alpha')).toMatchObject({ code: 'ADMIN_INVALID', message: expect.stringMatching(/has no Streamable HTTP remote/) });
      expect(await make('io.example/beta')).toMatchObject({ code: 'ADMIN_INVALID' });
      expect(await make('io.example/weather')).toMatchObject({ code: 'ADMIN_INVALID', message: 'the registry says io.example/weather needs the header Authorization: give it with --header' });
      const created = (await make('io.example/weather', 'Authorization: Bearer reg-token')) as Record<string, any>;
      expect(created).toMatchObject({ kind: 'mcp-registry', namespace: 'weather', url: `${upstream.origin}/mcp`, source: { registry: registry.url, server: 'io.example/weather', version: '2.1.0' }, tools: ['forecast'] });
      // The third server is on the second page: the registry was paged with its cursor.
      expect(registry.asked.some((u) => u.includes('cursor=2'))).toBe(true);
      await admin().bindGateway({ gateway: 'demo', capability: created.id });
      const forecast = await client.callTool({ name: 'weather_forecast', arguments: { city: 'Oslo' } });
      expect(forecast).toMatchObject({ isError: false, content: [{ type: 'text', text: 'Oslo: sunny' }] });
      const caps = await p.call('GET', '/v1/capabilities?type=connector', { headers: { authorization: `Bearer ${p.node.demo!.userKey}` } });
      expect(caps.json.data.capabilities.find((c: any) => c.id === created.id).specifications).toEqual({
        type: 'connector',
        kind: 'mcp-registry',
        url: `${upstream.origin}/mcp`,
        source: { registry: registry.url, server: 'io.example/weather', version: '2.1.0' },
        ttl_seconds: 300,
        tools: [{ name: 'weather_forecast', description: 'The weather of a city' }],
      });
    } finally {
      await upstream.close();
      await registry.close();
    }
  });
});
