import { randomUUID } from 'node:crypto';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentAudience, createAgentTokens, createTokenSigner, isPlatformError, MAX_DELEGATION_DEPTH, mintAgentToken, resolveDelegation } from '../../runtime/index.ts';
import { freshStore } from '../helpers/store.ts';

describe('agent tokens', () => {
  let store: Awaited<ReturnType<typeof freshStore>>;
  let now = Date.UTC(2026, 10, 24);
  const clock = () => now;
  const tokens = createAgentTokens('s3cret', 'https://api.example.com', clock);
  const accountId = randomUUID();
  const agentId = randomUUID();
  const principal = async (account = accountId, role: 'owner' | 'member' = 'member') => {
    const id = randomUUID();
    await store.tx((t) => t.principals.create({ id, accountId: account, kind: 'service', name: id, role }));
    return id;
  };

  beforeAll(async () => {
    store = await freshStore('pglite');
    await store.accounts.create({ id: accountId, name: 'a' });
    // Plain SQL: the agent's other columns (its model and instructions) keep their defaults.
    await store.db.query("insert into agents (id, account_id, handle, name, description) values ($1, $2, 'tok', 'Tok', '')", [agentId, accountId]);
  });
  afterAll(() => store.drop());

  it('[A2A-AUTH-07] [A2A-AUTH-09] a minted token names the agent in its audience and carries the chain as nested act claims', async () => {
    const [subject, a1, a2] = [await principal(), await principal(), await principal()];
    const { token, expiresIn } = await mintAgentToken({ store, tokens }, { accountId, agentId, subject, actors: [a2, a1] });
    expect(expiresIn).toBe(3600);
    const claims = decodeJwt(token);
    expect(claims).toMatchObject({ iss: 'https://api.example.com', sub: subject, aud: [agentAudience(agentId)], account_id: accountId, act: { sub: a2, act: { sub: a1 } } });
    expect(await tokens.verify(token, agentId)).toEqual({ ok: true, accountId, subject, actors: [a2, a1], expiresAt: (claims.exp as number) * 1000 });
    expect(await tokens.verify(token, randomUUID())).toEqual({ ok: false, reason: 'wrong_audience' });
    now += 3600_000;
    expect(await tokens.verify(token, agentId)).toEqual({ ok: false, reason: 'expired' });
    now -= 3600_000;
  });

  it('[A2A-AUTH-09] chains deeper than five are neither minted nor verified, however deep', async () => {
    const subject = await principal();
    const actors = await Promise.all(Array.from({ length: MAX_DELEGATION_DEPTH + 1 }, () => principal()));
    await expect(mintAgentToken({ store, tokens }, { accountId, agentId, subject, actors })).rejects.toSatisfy((e) => isPlatformError(e, 'IDENTITY_DELEGATION_INVALID'));
    expect((await tokens.verify((await tokens.sign({ accountId, agentIds: [agentId], subject, actors: actors.slice(0, 5) })).token, agentId)).ok).toBe(true);
    expect(await tokens.verify((await tokens.sign({ accountId, agentIds: [agentId], subject, actors })).token, agentId)).toEqual({ ok: false, reason: 'too_deep' });
    const deep = await tokens.sign({ accountId, agentIds: [agentId], subject, actors: Array.from({ length: 1000 }, (_, i) => `p${i}`) });
    expect(await tokens.verify(deep.token, agentId)).toEqual({ ok: false, reason: 'too_deep' });
  });

  it('[A2A-AUTH-08] every principal of the chain must be a live member of the account', async () => {
    const [subject, actor] = [await principal(), await principal()];
    expect((await resolveDelegation(store, accountId, [subject, actor]))?.map((m) => m.id)).toEqual([subject, actor]);
    const otherAccount = randomUUID();
    await store.accounts.create({ id: otherAccount, name: 'b' });
    const stranger = await principal(otherAccount);
    expect(await resolveDelegation(store, accountId, [subject, stranger])).toBeNull();
    await store.db.query("update principals set status = 'disabled' where id = $1", [actor]);
    expect(await resolveDelegation(store, accountId, [subject, actor])).toBeNull();
    await expect(mintAgentToken({ store, tokens }, { accountId, agentId, subject, actors: [actor] })).rejects.toSatisfy((e) => isPlatformError(e, 'IDENTITY_DELEGATION_INVALID'));
    await expect(mintAgentToken({ store, tokens }, { accountId: otherAccount, agentId, subject: stranger })).rejects.toThrow(/no agent/);
  });

  it('agent tokens and management tokens are signed with different keys: neither verifies as the other', async () => {
    const signer = createTokenSigner('s3cret', 'https://api.example.com', clock);
    const subject = await principal();
    const agentToken = (await mintAgentToken({ store, tokens }, { accountId, agentId, subject })).token;
    expect((await signer.verifyAccessToken(agentToken)).ok).toBe(false);
    const management = await signer.signAccessToken({ userId: subject, clientId: agentAudience(agentId), accountId, scope: 'platform' });
    expect(await tokens.verify(management, agentId)).toEqual({ ok: false, reason: 'invalid' });
    expect(await tokens.verify('not.a.jwt!', agentId)).toEqual({ ok: false, reason: 'malformed' });
  });
});
