import http from 'node:http';
import type { AddressInfo } from 'node:net';

export const PET_API_KEY = 'pets-secret-key';

/** The OpenAPI 3 document (YAML) of the pet API below; `servers` is filled with the API's origin. */
export const petApiSpec = (origin: string) => `openapi: 3.0.3
info:
  title: Pet Store
  description: Pets of a small shop
  version: 1.0.0
servers:
  - url: ${origin}/v1
components:
  securitySchemes:
    key:
      type: apiKey
      in: header
      name: X-Api-Key
  schemas:
    Pet:
      type: object
      required: [name]
      properties:
        id: { type: integer }
        name: { type: string, maxLength: 50 }
        tags: { type: array, items: { type: string } }
        parent:
          $ref: '#/components/schemas/Pet'
security:
  - key: []
paths:
  /pets:
    get:
      operationId: listPets
      summary: List the pets
      parameters:
        - { name: limit, in: query, schema: { type: integer, minimum: 1 }, description: How many at most }
        - { name: tag, in: query, schema: { type: array, items: { type: string } } }
      responses:
        '200': { description: the pets, content: { application/json: { schema: { type: array, items: { $ref: '#/components/schemas/Pet' } } } } }
    post:
      operationId: createPet
      summary: Add a pet
      requestBody:
        required: true
        content:
          application/json:
            schema: { $ref: '#/components/schemas/Pet' }
      responses:
        '201': { description: created }
  /pets/{petId}:
    parameters:
      - { name: petId, in: path, required: true, schema: { type: integer } }
    get:
      operationId: getPet
      summary: Read one pet
      parameters:
        - { name: X-Trace, in: header, schema: { type: string } }
      responses:
        '200': { description: the pet }
        '404': { description: no such pet }
    delete:
      summary: Remove a pet
      responses:
        '204': { description: removed }
`;

/** A small REST API on loopback that wants an API key in X-Api-Key, and records what reached it. */
export async function startPetApi() {
  const pets = new Map<number, Record<string, unknown>>([
    [1, { id: 1, name: 'Rex', tags: ['dog'] }],
    [2, { id: 2, name: 'Tom', tags: ['cat'] }],
  ]);
  const seen: { method: string; url: string; key: string | undefined; trace: string | undefined; body: string }[] = [];
  const server = http.createServer(async (req, res) => {
    let body = '';
    for await (const c of req) body += c;
    seen.push({ method: req.method!, url: req.url!, key: req.headers['x-api-key'] as string | undefined, trace: req.headers['x-trace'] as string | undefined, body });
    const json = (status: number, value: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
    if (req.headers['x-api-key'] !== PET_API_KEY) return json(401, { error: 'a valid X-Api-Key is needed' });
    const url = new URL(req.url!, 'http://x');
    const one = /^\/v1\/pets\/(\d+)$/.exec(url.pathname);
    if (url.pathname === '/v1/pets' && req.method === 'GET') {
      const tags = url.searchParams.getAll('tag');
      const list = [...pets.values()].filter((p) => tags.length === 0 || tags.some((t) => (p.tags as string[]).includes(t)));
      return json(200, list.slice(0, Number(url.searchParams.get('limit') ?? 100)));
    }
    if (url.pathname === '/v1/pets' && req.method === 'POST') {
      const pet = { ...JSON.parse(body), id: pets.size + 1 };
      pets.set(pet.id, pet);
      return json(201, pet);
    }
    if (one && req.method === 'GET') return pets.has(Number(one[1])) ? json(200, pets.get(Number(one[1]))) : json(404, { error: `no pet ${one[1]}` });
    if (one && req.method === 'DELETE') {
      pets.delete(Number(one[1]));
      return void res.writeHead(204).end();
    }
    json(404, { error: 'no route' });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    spec: petApiSpec(origin),
    seen,
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

/** A registry speaking the MCP Registry API (`GET /v0/servers`), listing the given servers, two to a page. */
export async function startRegistry(servers: Record<string, unknown>[]) {
  const asked: string[] = [];
  const server = http.createServer((req, res) => {
    asked.push(req.url!);
    const url = new URL(req.url!, 'http://x');
    if (url.pathname !== '/v0/servers') return void res.writeHead(404).end();
    // The official registry matches `search` as a substring; this one lists everything, so a client must page.
    const matching = servers;
    const from = Number(url.searchParams.get('cursor') ?? 0);
    const page = matching.slice(from, from + 2);
    const next = from + 2 < matching.length ? String(from + 2) : null;
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ servers: page.map((s) => ({ server: s, _meta: {} })), metadata: { count: page.length, nextCursor: next } }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    asked,
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
