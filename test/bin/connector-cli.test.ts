import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { startCliNode } from '../helpers/cli-node.ts';
import { PET_API_KEY, startPetApi } from '../helpers/pet-api.ts';

describe('platform admin connector create, against a running node', () => {
  let node: Awaited<ReturnType<typeof startCliNode>>;
  let api: Awaited<ReturnType<typeof startPetApi>>;
  let accountId: string;

  beforeAll(async () => {
    api = await startPetApi();
    node = await startCliNode('platform-connector-cli-', { PLATFORM_EGRESS_ALLOW_LOOPBACK: 'true' });
    accountId = (await runCli(['agents', 'show', 'demo', '--json'], node.env)).json.account_id;
  }, 120_000);
  afterAll(async () => {
    await node?.close();
    await api?.close();
  });

  it('[CAP-16] makes a REST connector from an OpenAPI file and reports its tools; a bad file or kind is a clear error, no stack trace', async () => {
    const spec = path.join(node.dataDir, 'pets.yaml');
    writeFileSync(spec, api.spec);
    const made = await runCli(['admin', 'connector', 'create', '--account', accountId, '--kind', 'rest', '--name', 'Pet Store', '--namespace', 'pets', '--spec', spec, '--api-key', PET_API_KEY, '--json'], node.env);
    expect(made.code, made.stderr).toBe(0);
    expect(made.json).toMatchObject({ account_id: accountId, kind: 'rest', name: 'Pet Store', namespace: 'pets', url: `${api.origin}/v1`, tools: ['listPets', 'createPet', 'getPet', 'delete_pets_petId'] });
    const listed = await runCli(['capabilities', 'list', '--json'], node.env);
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.stringify(listed.json)).toContain('"namespace":"pets"');

    const [missing, notOpenApi, badKind, again] = await Promise.all([
      runCli(['admin', 'connector', 'create', '--account', accountId, '--kind', 'rest', '--name', 'X', '--spec', path.join(node.dataDir, 'nope.yaml'), '--json'], node.env),
      runCli(['admin', 'connector', 'create', '--account', accountId, '--kind', 'rest', '--name', 'X', '--spec', path.join(node.dataDir, 'test-calc.npack'), '--url', api.origin, '--json'], node.env),
      runCli(['admin', 'connector', 'create', '--account', accountId, '--kind', 'soap', '--name', 'X', '--url', api.origin, '--json'], node.env),
      runCli(['admin', 'connector', 'create', '--account', accountId, '--kind', 'rest', '--name', 'Pets again', '--namespace', 'pets', '--spec', spec, '--json'], node.env),
    ]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/--spec \S+nope\.yaml cannot be read: ENOENT/);
    expect(notOpenApi.code).toBe(1);
    expect(notOpenApi.json.error.code).toBe('ADMIN_INVALID');
    expect(notOpenApi.json.error.message).toMatch(/^invalid OpenAPI document: /);
    expect(badKind.json.error).toEqual({ code: 'ADMIN_INVALID', message: 'invalid connector kind "soap": expected mcp (a custom MCP server), rest (an OpenAPI 3 document) or registry (a server of an MCP registry)' });
    expect(again.code).toBe(1);
    expect(again.json.error.code).toBe('ADMIN_CONFLICT');
    for (const r of [missing, notOpenApi, badKind, again]) expect(r.stderr).not.toMatch(/\n\s+at /);
  }, 60_000);
});
