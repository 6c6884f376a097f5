import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_EMAIL } from '../../runtime/index.ts';
import { runCli } from '../helpers/cli.ts';
import { startCliNode } from '../helpers/cli-node.ts';
import { PET_API_KEY, startPetApi } from '../helpers/pet-api.ts';

/** The first line a command wrote to standard error (the node's CLI may add hints after it). */
const firstLine = (text: string) => text.split('\n')[0];

describe('operator commands by name, list commands, switches and client configuration, against a running node', () => {
  let node: Awaited<ReturnType<typeof startCliNode>>;
  let api: Awaited<ReturnType<typeof startPetApi>>;
  let env: Record<string, string>;
  const admin = (...args: string[]) => runCli(['admin', ...args, '--json'], env);
  /** GET /v1/capabilities with an API key: 200, or the refusal's code. */
  const withKey = async (key: string) => {
    const res = await request(`http://127.0.0.1:${node.server.port}/v1/capabilities`, { headers: { host: 'api.localhost', authorization: `Bearer ${key}` } });
    const body = (await res.body.json()) as { code?: string };
    return res.statusCode === 200 ? 200 : `${res.statusCode} ${body.code}`;
  };
  // Two accounts named Twin, one named Solo; a service principal "bot" in Solo and in the first Twin.
  let twin1: string;
  let twin2: string;
  let solo: string;
  let botSolo: string;
  let botTwin: string;

  beforeAll(async () => {
    api = await startPetApi();
    node = await startCliNode('platform-names-cli-', { PLATFORM_EGRESS_ALLOW_LOOPBACK: 'true' });
    env = node.env;
  }, 120_000);
  afterAll(async () => {
    await node?.close();
    await api?.close();
  });

  it('accounts by id or by name: a name two accounts bear is refused with both ids, an unknown name is not found', async () => {
    twin1 = (await admin('account', 'create', '--name', 'Twin')).json.id;
    twin2 = (await admin('account', 'create', '--name', 'Twin')).json.id;
    solo = (await admin('account', 'create', '--name', 'Solo')).json.id;
    const list = await admin('account', 'list');
    expect(list.code, list.stderr).toBe(0);
    expect(list.json.map((a: { name: string }) => a.name)).toEqual(['Demo', 'Twin', 'Twin', 'Solo']);
    expect(list.json[3]).toEqual({ id: solo, name: 'Solo', created_at: expect.any(String) });
    const table = await runCli(['admin', 'account', 'list'], env);
    expect(table.stdout.split('\n')[0]).toMatch(/^ID {36}NAME {2}CREATED_AT$/);
    expect(table.stdout).toMatch(new RegExp(`^${solo}  Solo `, 'm'));

    const [ambiguous, unknown, uuidName, inTwin, inSolo] = await Promise.all([
      admin('principal', 'create', '--account', 'Twin', '--name', 'bot'),
      admin('principal', 'create', '--account', 'Nobody', '--name', 'bot'),
      admin('account', 'create', '--name', twin1),
      admin('principal', 'create', '--account', twin1, '--name', 'bot'),
      admin('principal', 'create', '--account', 'Solo', '--name', 'bot'),
    ]);
    expect([ambiguous.code, unknown.code, uuidName.code, inTwin.code, inSolo.code]).toEqual([1, 1, 1, 0, 0]);
    expect(ambiguous.json.error).toEqual({ code: 'ADMIN_CONFLICT', message: `2 accounts are named "Twin": give the id (${twin1}, ${twin2})` });
    expect(unknown.json.error).toEqual({ code: 'ADMIN_NOT_FOUND', message: 'no account named "Nobody"' });
    expect(uuidName.json.error).toEqual({ code: 'ADMIN_INVALID', message: `account name ${JSON.stringify(twin1)} looks like an id: give a name that is not a UUID` });
    botTwin = inTwin.json.id;
    botSolo = inSolo.json.id;
    const principals = await admin('principal', 'list', '--account', 'Solo');
    expect(principals.json).toEqual([{ id: botSolo, kind: 'service', name: 'bot', email: null, role: 'member', status: 'active', created_at: expect.any(String) }]);
  }, 120_000);

  it('[MGMT-AUTH-01] [MGMT-AUTH-03] keys get names: listed without their secret, revoked by name only within their account', async () => {
    const ci = await admin('key', 'create', '--principal', 'bot', '--account', 'Solo', '--name', 'ci');
    expect(ci.code, ci.stderr).toBe(0);
    expect(Object.keys(ci.json)).toEqual(['id', 'name', 'key']);
    expect(ci.json.name).toBe('ci');
    const [taken, twinCi, noAccount, badName] = await Promise.all([
      admin('key', 'create', '--principal', 'bot', '--account', solo, '--name', 'ci'),
      admin('key', 'create', '--principal', botTwin, '--account', twin1, '--name', 'ci'),
      admin('key', 'create', '--principal', 'bot', '--name', 'other'),
      admin('key', 'create', '--principal', botSolo, '--name', randomUUID()),
    ]);
    expect(taken.json.error).toEqual({ code: 'ADMIN_CONFLICT', message: 'key name "ci" in account "Solo" is already taken' });
    expect(twinCi.code, twinCi.stderr).toBe(0);
    expect(noAccount.json.error).toEqual({ code: 'ADMIN_INVALID', message: 'principal "bot" is a name, and names repeat across accounts: give --account <id|name> with it, or the principal\'s id' });
    expect(badName.json.error.code).toBe('ADMIN_INVALID');
    expect(badName.json.error.message).toMatch(/^key name "[0-9a-f-]{36}" looks like an id/);

    const listed = await admin('key', 'list', '--account', 'Solo');
    expect(listed.json).toEqual([{ id: ci.json.id, name: 'ci', principal_id: botSolo, principal_name: 'bot', status: 'active', created_at: expect.any(String), expires_at: null, revoked_at: null }]);
    const table = await runCli(['admin', 'key', 'list', '--account', 'Solo'], env);
    expect(table.stdout.split('\n')[0]).toMatch(/^ID\s+NAME\s+PRINCIPAL_ID\s+PRINCIPAL_NAME\s+STATUS\s+CREATED_AT\s+EXPIRES_AT\s+REVOKED_AT$/);
    // The secret is everything after the key id's `_` (runtime/identity/api-keys.ts): base64url, so it may hold `_`
    // itself, and only its whole is a fair needle.
    const secret = ci.json.key.slice(ci.json.key.indexOf('_') + 1);
    expect(secret).toHaveLength(43);
    for (const out of [listed.stdout, table.stdout]) expect(out).not.toContain(secret);
    expect(await withKey(ci.json.key)).toBe(200);

    const [elsewhere, bare] = await Promise.all([admin('key', 'revoke', 'ci', '--account', 'Demo'), admin('key', 'revoke', 'ci')]);
    expect(elsewhere.json.error).toEqual({ code: 'ADMIN_NOT_FOUND', message: 'no key named "ci" in account "Demo" (revoked keys are named by their id)' });
    expect(bare.json.error).toEqual({ code: 'ADMIN_INVALID', message: 'key "ci" is a name, and key names are unique only within an account: give --account <id|name> with it, or the key\'s id' });
    const revoked = await admin('key', 'revoke', 'ci', '--account', 'Solo');
    expect(revoked.json).toEqual({ id: ci.json.id, name: 'ci', revoked_at: expect.any(String) });
    expect(await withKey(ci.json.key)).toBe('403 MGMT_CREDENTIAL_REVOKED');
    // The other account's key of that name is untouched, and the name is free again in Solo.
    expect(await withKey(twinCi.json.key)).toBe(200);
    expect((await admin('key', 'create', '--principal', 'bot', '--account', 'Solo', '--name', 'ci')).code).toBe(0);
  }, 120_000);

  it("principals and capabilities by name resolve in the target's account, never in another's", async () => {
    const demoPrincipals = (await admin('principal', 'list', '--account', 'Demo')).json as { id: string; name: string; email: string | null }[];
    const service = demoPrincipals.find((p) => p.name === 'demo-service')!;
    const [strangerToken, serviceToken, userToken, strangerClient, serviceClient, userClient] = await Promise.all([
      admin('agent', 'token', '--agent', 'demo', '--principal', 'bot'),
      admin('agent', 'token', '--agent', 'demo', '--principal', 'demo-service'),
      admin('agent', 'token', '--agent', 'demo', '--principal', DEMO_EMAIL.toUpperCase()),
      admin('gateway', 'client-create', '--gateway', 'demo', '--principal', 'bot'),
      admin('gateway', 'client-create', '--gateway', 'demo', '--principal', 'demo-service'),
      admin('gateway', 'client-create', '--gateway', 'demo', '--principal', DEMO_EMAIL),
    ]);
    expect(strangerToken.json.error).toEqual({ code: 'ADMIN_NOT_FOUND', message: 'no principal named "bot" in agent demo\'s account' });
    expect(serviceToken.json).toMatchObject({ principal_id: service.id });
    expect(userToken.json).toMatchObject({ principal_id: demoPrincipals.find((p) => p.email === DEMO_EMAIL)!.id });
    expect(strangerClient.json.error).toEqual({ code: 'ADMIN_NOT_FOUND', message: 'no principal named "bot" in gateway demo\'s account' });
    expect(serviceClient.json).toMatchObject({ grant_types: ['client_credentials'] });
    expect(userClient.json.error).toEqual({ code: 'ADMIN_INVALID', message: `principal "${DEMO_EMAIL}" is a user: client credentials are for service principals` });

    const calc = ((await runCli(['plugins', 'list', '--json'], env)).json as { id: string; name: string }[]).find((c) => c.name === 'calc')!;
    expect((await admin('gateway', 'create', '--account', 'Solo', '--handle', 'solo-tools')).code).toBe(0);
    const [foreign, unbound] = await Promise.all([
      admin('gateway', 'bind', '--gateway', 'solo-tools', '--capability', 'calc'),
      admin('gateway', 'unbind', '--gateway', 'demo', '--capability', 'calc'),
    ]);
    expect(foreign.json.error).toEqual({ code: 'ADMIN_NOT_FOUND', message: 'no capability named "calc" in the gateway\'s account' });
    expect(unbound.json).toEqual({ gateway_id: expect.any(String), capability_id: calc.id, bound: false });
    expect((await admin('gateway', 'bind', '--gateway', 'demo', '--capability', 'calc')).json).toMatchObject({ capability_id: calc.id, bound: true, changed: true });
    // `gateways list` takes the account by name too.
    expect((await runCli(['gateways', 'list', '--account', 'Solo', '--json'], env)).json.map((g: { handle: string }) => g.handle)).toEqual(['solo-tools']);
    expect((await runCli(['gateways', 'list', '--account', 'Twin', '--json'], env)).json.error.code).toBe('ADMIN_CONFLICT');
  }, 120_000);

  it("connector list: an account's connectors without their credentials; another account's list is its own", async () => {
    const spec = path.join(node.dataDir, 'pets.yaml');
    writeFileSync(spec, api.spec);
    const made = await admin('connector', 'create', '--account', 'Demo', '--kind', 'rest', '--name', 'Pet Store', '--namespace', 'pets', '--spec', spec, '--api-key', PET_API_KEY);
    expect(made.code, made.stderr).toBe(0);
    const [demo, other] = await Promise.all([admin('connector', 'list', '--account', 'Demo'), admin('connector', 'list', '--account', 'Solo')]);
    expect(demo.json).toEqual([{ id: made.json.id, name: 'Pet Store', namespace: 'pets', kind: 'rest', url: `${api.origin}/v1`, tools: 4, credentials: true, source: null }]);
    expect(demo.stdout).not.toContain(PET_API_KEY);
    expect(other.json).toEqual([]);
    expect((await runCli(['admin', 'connector', 'list', '--account', 'Solo'], env)).stdout).toBe('(none)\n');
  }, 120_000);

  it('switches take no value: --public true, --public=false and --json true are usage errors (exit 2); --public alone is on', async () => {
    const create = ['admin', 'gateway', 'client-create', '--gateway', 'demo', '--redirect-uri', 'http://127.0.0.1:9/cb'];
    const [spaced, inline, json, listJson, stray, on] = await Promise.all([
      runCli([...create, '--public', 'true'], env),
      runCli([...create, '--public=false'], env),
      runCli(['admin', 'account', 'list', '--json', 'true'], env),
      runCli(['gateways', 'list', '--json=1'], env),
      runCli(['admin', 'account', 'list', 'stray'], env),
      runCli([...create, '--public', '--json'], env),
    ]);
    expect([spaced.code, inline.code, json.code, listJson.code, stray.code]).toEqual([2, 2, 2, 2, 2]);
    expect(firstLine(spaced.stderr)).toBe('platform admin gateway client-create: --public is a switch and takes no value: give --public alone to turn it on, leave it out to keep it off (not --public true)');
    expect(firstLine(inline.stderr)).toBe('platform admin gateway client-create: --public is a switch and takes no value: give --public alone to turn it on, leave it out to keep it off (not --public=false)');
    expect(firstLine(json.stderr)).toBe('platform admin account list: --json is a switch and takes no value: give --json alone to turn it on, leave it out to keep it off (not --json true)');
    expect(firstLine(listJson.stderr)).toBe('platform gateways list: --json is a switch and takes no value: give --json alone to turn it on, leave it out to keep it off (not --json=1)');
    expect(firstLine(stray.stderr)).toMatch(/^platform admin account list: Unexpected argument 'stray'/);
    for (const r of [spaced, inline, json, listJson, stray]) {
      expect(r.stdout).toBe('');
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
    expect(on.code, on.stderr).toBe(0);
    expect(on.json).toMatchObject({ token_endpoint_auth_method: 'none', redirect_uris: ['http://127.0.0.1:9/cb'] });
    expect(on.json).not.toHaveProperty('client_secret');
  }, 120_000);

  it('gateways show --client prints the configuration to paste: the snippet on stdout, where it goes and how to sign in on stderr', async () => {
    const url = `http://mcp-demo.localhost:${node.server.port}`;
    const [vscode, claude, unknownClient, unknownGateway] = await Promise.all([
      runCli(['gateways', 'show', 'demo', '--client', 'vscode'], env),
      runCli(['gateways', 'show', 'demo', '--client', 'claude', '--json'], env),
      runCli(['gateways', 'show', 'demo', '--client', 'zed'], env),
      runCli(['gateways', 'show', 'nope', '--client', 'cursor', '--json'], env),
    ]);
    expect(vscode.code, vscode.stderr).toBe(0);
    // The demo gateway is private: clients reach it with an API key, asked for by VS Code and never written out.
    expect(JSON.parse(vscode.stdout)).toEqual({
      servers: { demo: { type: 'http', url, headers: { Authorization: 'Bearer ${input:demo-api-key}' } } },
      inputs: [{ type: 'promptString', id: 'demo-api-key', description: 'API key for the MCP gateway demo', password: true }],
    });
    expect(firstLine(vscode.stderr)).toBe('Paste into .vscode/mcp.json in the workspace (or MCP: Open User Configuration), merged into "servers" and "inputs".');
    expect(vscode.stderr).toContain('Auth: API key, sent as "Authorization: Bearer <API key>"');
    expect(claude.json).toEqual({
      gateway: 'demo',
      url,
      client: 'claude',
      file: expect.stringMatching(/^claude_desktop_config\.json /),
      auth: 'key',
      config: { mcpServers: { demo: { command: 'npx', args: ['mcp-remote', url, '--allow-http', '--header', 'Authorization:${AUTH_HEADER}'], env: { AUTH_HEADER: 'Bearer <API key>' } } } },
      notes: expect.any(Array),
    });
    expect(unknownClient.code).toBe(2);
    expect(firstLine(unknownClient.stderr)).toBe('platform gateways show: --client takes claude, vscode, cursor (got "zed")');
    expect(unknownGateway.code).toBe(1);
    expect(unknownGateway.json.error).toEqual({ code: 'ADMIN_NOT_FOUND', message: 'no gateway "nope"' });

    // By id as well as by handle; a gateway where clients register themselves gets no header: the client signs in.
    const demoId = (await runCli(['gateways', 'show', 'demo', '--json'], env)).json.id;
    expect((await admin('gateway', 'configure', '--gateway', 'demo', '--auth', 'private-dcr')).code).toBe(0);
    const cursor = await runCli(['gateways', 'show', demoId, '--client', 'cursor', '--json'], env);
    expect(cursor.json).toMatchObject({ gateway: 'demo', auth: 'oauth', config: { mcpServers: { demo: { url } } } });
    expect(cursor.json.config.mcpServers.demo).toEqual({ url });
    expect(cursor.json.notes[0]).toMatch(/^Auth: OAuth\. /);
  }, 120_000);
});
