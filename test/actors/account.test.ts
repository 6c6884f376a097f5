import { describe, expect, it } from 'vitest';
import { accountMachine, accountTimers, type AccountEvent, type AccountInput } from '../../actors/index.ts';
import { walk as walkMachine } from '../helpers/statechart.ts';

const walk = (input: AccountInput, ...events: AccountEvent[]) => walkMachine(accountMachine, input, ...events);


describe('Account statechart', () => {
  it('starts active with no budget, or funded / exhausted from its input', () => {
    expect(walk({ accountId: 'a' }).value).toEqual({ status: 'active', budget: 'none' });
    expect(walk({ accountId: 'a', credits: 5 }).value).toEqual({ status: 'active', budget: 'funded' });
    expect(walk({ accountId: 'a', credits: 0 }).value).toEqual({ status: 'active', budget: 'exhausted' });
  });

  it('BUDGET_SET funds or exhausts from any budget state', () => {
    const s = walk({ accountId: 'a' }, { type: 'BUDGET_SET', credits: 10 });
    expect(s.value).toMatchObject({ budget: 'funded' });
    expect(s.context.credits).toBe(10);
    expect(walk({ accountId: 'a', credits: 3 }, { type: 'BUDGET_SET', credits: 0 }).value).toMatchObject({ budget: 'exhausted' });
    expect(walk({ accountId: 'a' }, { type: 'BUDGET_UNAVAILABLE' }, { type: 'BUDGET_SET', credits: 1 }).value).toMatchObject({
      budget: 'funded',
    });
  });

  it('BUDGET_UNAVAILABLE makes the budget unknown', () => {
    expect(walk({ accountId: 'a', credits: 3 }, { type: 'BUDGET_UNAVAILABLE' }).value).toMatchObject({ budget: 'unknown' });
  });

  it('DEBIT spends credits, exhausts at zero, and refuses what it cannot afford', () => {
    const a = walk({ accountId: 'a', credits: 3 }, { type: 'DEBIT', amount: 2, requestId: 'r1' });
    expect(a.context).toEqual({ accountId: 'a', credits: 1, suspendedUntil: null });
    // The answer is a reply to the asker, not a field of the persisted context.
    expect(a.emitted).toEqual([{ type: 'reply.debit', requestId: 'r1', ok: true }]);
    expect(a.value).toMatchObject({ budget: 'funded' });
    const b = walk({ accountId: 'a', credits: 3 }, { type: 'DEBIT', amount: 3, requestId: 'r2' });
    expect(b.value).toMatchObject({ budget: 'exhausted' });
    expect(b.context.credits).toBe(0);
    const c = walk({ accountId: 'a', credits: 3 }, { type: 'DEBIT', amount: 4, requestId: 'r3' });
    expect(c.context.credits).toBe(3);
    expect(c.emitted).toEqual([{ type: 'reply.debit', requestId: 'r3', ok: false }]);
    const d = walk({ accountId: 'a' }, { type: 'DEBIT', amount: 1, requestId: 'r4' });
    expect(d.emitted).toEqual([{ type: 'reply.debit', requestId: 'r4', ok: false }]);
    expect(walk({ accountId: 'a', credits: 3 }, { type: 'DEBIT', amount: -1, requestId: 'r5' }).context.credits).toBe(3);
  });

  it('SUSPEND with until arms a resume timer; RESUME clears it', () => {
    const s = walk({ accountId: 'a' }, { type: 'SUSPEND', until: 5_000 });
    expect(s.value).toMatchObject({ status: 'suspended' });
    expect(s.emitted).toEqual([{ type: 'account.suspended', until: 5_000 }]);
    expect(accountTimers(s)).toEqual([{ key: 'resume', at: 5_000, event: { type: 'RESUME' } }]);
    const r = walk({ accountId: 'a' }, { type: 'SUSPEND', until: 5_000 }, { type: 'RESUME' });
    expect(r.value).toMatchObject({ status: 'active' });
    expect(r.emitted).toEqual([{ type: 'account.resumed' }]);
    expect(accountTimers(r)).toEqual([]);
    const open = walk({ accountId: 'a' }, { type: 'SUSPEND' });
    expect(accountTimers(open)).toEqual([]);
    const moved = walk({ accountId: 'a' }, { type: 'SUSPEND' }, { type: 'SUSPEND', until: 9 });
    expect(accountTimers(moved)).toEqual([{ key: 'resume', at: 9, event: { type: 'RESUME' } }]);
  });
});
