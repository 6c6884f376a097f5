import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock, registerOAuthClient, type ManualClock } from '../../runtime/index.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

describe('housekeeping', () => {
  let p: TestPlatform;
  let clock: ManualClock;

  beforeAll(async () => {
    clock = manualClock(Date.parse('2026-11-23T08:00:00.000Z'));
    p = await startTestPlatform({ clock });
  }, 60_000);
  afterAll(() => p.close());

  it('deletes expired MCP sessions, codes, consent tickets and refresh tokens, and keeps live ones', async () => {
    const { store, housekeeping } = p.node.services;
    const g = (await store.gateways.byHandle('demo'))!;
    const iso = (ms: number) => new Date(clock.now() + ms).toISOString();
    const { client } = await registerOAuthClient(store, g, { redirectUris: ['https://app.example/cb'], authMethod: 'none', grantTypes: ['authorization_code', 'refresh_token'], clientName: 'c', via: 'dynamic' });
    const principal = (await store.principals.findUserByEmail(p.node.demo!.userEmail))!.id;
    for (const [tag, ttl] of [['old', -1], ['new', 60_000]] as const) {
      await store.mcpSessions.create({ id: `s-${tag}`, gatewayId: g.id, accountId: g.accountId, callerKey: 'k', protocolVersion: '2025-11-25', expiresAt: iso(ttl) });
      await store.oauth.createCode(`code-${tag}`, { clientId: client.clientId, gatewayId: g.id, accountId: g.accountId, principalId: principal, redirectUri: 'https://app.example/cb', codeChallenge: 'x', scope: 'mcp', resource: null, expiresAt: iso(ttl) });
      await store.oauth.useTicket(`ticket-${tag}`, iso(ttl));
      await store.oauth.createRefresh(`refresh-${tag}`, { familyId: crypto.randomUUID(), clientId: client.clientId, gatewayId: g.id, accountId: g.accountId, principalId: principal, scope: 'mcp', resource: null, expiresAt: iso(ttl) });
    }
    expect(await housekeeping.runOnce()).toEqual({ mcpSessions: 1, oauth: 3, linkCodes: 0 });
    const left = async (sql: string) => (await store.db.query<{ k: string }>(sql)).rows.map((r) => r.k);
    expect(await left('select id as k from mcp_sessions')).toEqual(['s-new']);
    expect(await left('select code_hash as k from oauth_codes')).toEqual(['code-new']);
    expect(await left('select jti as k from oauth_used_tickets')).toEqual(['ticket-new']);
    expect(await left('select token_hash as k from oauth_refresh_tokens')).toEqual(['refresh-new']);
    // A used ticket stays used until it expires: posting its form again is refused meanwhile.
    expect(await store.oauth.useTicket('ticket-new', iso(60_000))).toBe(false);
    clock.set(clock.now() + 60_000);
    expect(await housekeeping.runOnce()).toEqual({ mcpSessions: 1, oauth: 3, linkCodes: 0 });
  });
});
