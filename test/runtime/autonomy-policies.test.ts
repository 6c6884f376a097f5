import { createHash, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { argumentsHash, canonicalJson, createAutonomy, decisionLog, governingRule, holds, judgeArguments, parsePolicy, POLICY_LIMITS, type Autonomy, type Condition, type PolicyRule } from '../../runtime/approvals/index.ts';
import type { Caller, ToolEntry } from '../../runtime/index.ts';
import type { Store } from '../../store/index.ts';
import { mustRun } from '../helpers/env.ts';
import { freshStore, type DriverName } from '../helpers/store.ts';

const drivers: DriverName[] = ['pglite', ...(mustRun('postgres') ? (['pg'] as const) : [])];

const tool = (name: string): ToolEntry => ({ name, description: '', inputSchema: { type: 'object' }, readOnly: false, requiresAnchor: false, origin: { kind: 'plugin', capabilityId: 'c' }, invoke: async () => ({ isError: false, value: null }) });
const cond = (op: Condition['op'], value: Condition['value'], path = 'x', otherwise: Condition['otherwise'] = 'deny'): Condition => ({ path, op, value, otherwise });
const rules = (...r: PolicyRule[]) => new Map(r.map((x) => [x.tool, x]));

describe('the autonomy rule language', () => {
  it('[SURF-15] precedence: a named deny at any level is final; else the most specific level decides, its named rule before its *', () => {
    const allow = (t: string): PolicyRule => ({ tool: t, mode: 'allow' });
    const deny = (t: string): PolicyRule => ({ tool: t, mode: 'deny' });
    const ask = (t: string): PolicyRule => ({ tool: t, mode: 'ask' });
    // The allowlist pattern: account denies everything by default, the agent allows one tool by name.
    expect(governingRule({ account: rules(deny('*')), agent: rules(allow('calc_add')) }, 'calc_add')).toMatchObject({ level: 'agent', rule: { mode: 'allow' } });
    expect(governingRule({ account: rules(deny('*')), agent: rules(allow('calc_add')) }, 'calc_sub')).toMatchObject({ level: 'account', rule: { mode: 'deny' } });
    // A user's * outranks the account's named allow (the user level is more specific).
    expect(governingRule({ account: rules(allow('calc_add')), user: rules(ask('*')) }, 'calc_add')).toMatchObject({ level: 'user', rule: { mode: 'ask' } });
    // A named deny is never lifted, not even by a named allow at a more specific level.
    expect(governingRule({ account: rules(deny('calc_rm')), user: rules(allow('calc_rm')) }, 'calc_rm')).toMatchObject({ level: 'account', rule: { mode: 'deny' } });
    expect(governingRule({ account: rules(deny('*')), user: rules(allow('*')) }, 'calc_rm')).toMatchObject({ level: 'user', rule: { mode: 'allow' } });
    // Within one level the named rule comes before *.
    expect(governingRule({ agent: rules(deny('*'), ask('calc_add')) }, 'calc_add')).toMatchObject({ level: 'agent', rule: { mode: 'ask' } });
    expect(governingRule({}, 'calc_add')).toBeNull();
  });

  it('[SURF-15] each operator, at both sides of its bound; a missing argument or one of the wrong type fails', () => {
    const args = { x: 10, s: 'notes/today.md', b: true, n: null, arr: [1, 2, 3], deep: { list: [{ name: 'ab' }] }, emoji: '😀😀' };
    const cases: [Condition, boolean][] = [
      [cond('equals', 10), true],
      [cond('equals', 11), false],
      [cond('equals', '10'), false],
      [cond('equals', true, 'b'), true],
      [cond('equals', null, 'n'), true],
      [cond('equals', null, 'missing'), false],
      [cond('one_of', [9, 10]), true],
      [cond('one_of', [9, 11]), false],
      [cond('max', 10), true],
      [cond('max', 9.999), false],
      [cond('min', 10), true],
      [cond('min', 10.001), false],
      [cond('max', 100, 's'), false],
      [cond('prefix', 'notes/', 's'), true],
      [cond('prefix', 'notes/today.md', 's'), true],
      [cond('prefix', 'notes/today.mdx', 's'), false],
      [cond('prefix', 'secret/', 's'), false],
      [cond('prefix', '1', 'x'), false],
      [cond('max_length', 14, 's'), true],
      [cond('max_length', 13, 's'), false],
      [cond('max_length', 3, 'arr'), true],
      [cond('max_length', 2, 'arr'), false],
      // Characters are code points: two emoji are two characters (four UTF-16 units).
      [cond('max_length', 2, 'emoji'), true],
      [cond('max_length', 1, 'emoji'), false],
      [cond('equals', 2, 'arr.1'), true],
      [cond('equals', 2, 'arr.01'), false],
      [cond('equals', 'ab', 'deep.list.0.name'), true],
      [cond('equals', 'ab', 'deep.list.1.name'), false],
      [cond('equals', 10, 'x.y'), false],
    ];
    for (const [c, expected] of cases) expect(holds(c, args), JSON.stringify(c)).toBe(expected);
  });

  it('[SURF-15] may_deny_on_args: all conditions hold → allow; a failing deny beats a failing ask', () => {
    const rule: PolicyRule = { tool: 't', mode: 'may_deny_on_args', conditions: [cond('max', 100, 'a', 'ask'), cond('prefix', 'notes/', 'path', 'deny')] };
    expect(judgeArguments(rule, { a: 100, path: 'notes/x' })).toEqual({ outcome: 'allow' });
    expect(judgeArguments(rule, { a: 101, path: 'notes/x' })).toMatchObject({ outcome: 'ask', failed: { path: 'a' } });
    expect(judgeArguments(rule, { a: 101, path: '/etc/passwd' })).toMatchObject({ outcome: 'deny', failed: { path: 'path' } });
    expect(judgeArguments(rule, {})).toMatchObject({ outcome: 'deny' });
  });

  it('[SURF-15] a document at its limits is accepted, one past each is refused naming the field', () => {
    const many = (n: number) => ({ rules: Array.from({ length: n }, (_, i) => ({ tool: `t_${i}`, mode: 'allow' })) });
    expect(parsePolicy(many(POLICY_LIMITS.rules)).rules).toHaveLength(100);
    expect(() => parsePolicy(many(POLICY_LIMITS.rules + 1))).toThrow(expect.objectContaining({ code: 'AUTONOMY_POLICY_INVALID', message: 'invalid autonomy policy: rules must have at most 100 items' }));
    const conditions = (n: number) => ({ rules: [{ tool: 't', mode: 'may_deny_on_args', conditions: Array.from({ length: n }, () => cond('max', 1)) }] });
    expect(parsePolicy(conditions(16)).rules[0]!.conditions).toHaveLength(16);
    expect(() => parsePolicy(conditions(17))).toThrow(/rules\.0\.conditions must be an array of 1 to 16 conditions/);
    expect(() => parsePolicy(conditions(0))).toThrow(/rules\.0\.conditions must be an array of 1 to 16/);
    const oneOf = (n: number) => ({ rules: [{ tool: 't', mode: 'may_deny_on_args', conditions: [cond('one_of', Array.from({ length: n }, (_, i) => i))] }] });
    expect(parsePolicy(oneOf(50)).rules[0]!.conditions![0]!.value).toHaveLength(50);
    expect(() => parsePolicy(oneOf(51))).toThrow(/rules\.0\.conditions\.0\.value must be an array of 1 to 50 values/);
    const path = (segments: number) => ({ rules: [{ tool: 't', mode: 'may_deny_on_args', conditions: [cond('max', 1, Array(segments).fill('k').join('.'))] }] });
    expect(() => parsePolicy(path(8))).not.toThrow();
    expect(() => parsePolicy(path(9))).toThrow(/rules\.0\.conditions\.0\.path must have at most 8 segments/);
    // The size of the document as JSON: exactly the limit passes, one byte more is too large.
    const sized = (bytes: number) => {
      const base = JSON.stringify({ rules: [{ tool: 't', mode: 'deny', reason: '' }] }).length;
      const reasons = bytes - base;
      const rules: PolicyRule[] = [];
      let left = reasons;
      for (let i = 0; left > 0; i++) {
        const extra = i === 0 ? 0 : JSON.stringify({ tool: `t${i}`, mode: 'deny', reason: '' }).length + 1;
        const take = Math.min(POLICY_LIMITS.reason, left - extra);
        rules.push({ tool: i === 0 ? 't' : `t${i}`, mode: 'deny', reason: 'r'.repeat(take) });
        left -= take + extra;
      }
      const doc = { rules };
      expect(JSON.stringify(doc).length).toBe(bytes);
      return doc;
    };
    expect(() => parsePolicy(sized(POLICY_LIMITS.documentBytes))).not.toThrow();
    expect(() => parsePolicy(sized(POLICY_LIMITS.documentBytes + 1))).toThrow(expect.objectContaining({ code: 'AUTONOMY_POLICY_TOO_LARGE' }));
    // Fields the language does not know are dropped; the types of values are the operator's.
    expect(parsePolicy({ rules: [{ tool: '*', mode: 'ask', extra: 1 }], other: true })).toEqual({ rules: [{ tool: '*', mode: 'ask' }] });
    for (const [bad, message] of [
      [{ rules: [{ tool: 'a b', mode: 'allow' }] }, /rules\.0\.tool must be \*/],
      [{ rules: [{ tool: 'a', mode: 'allow' }, { tool: 'a', mode: 'deny' }] }, /rules\.1\.tool names a a second time/],
      [{ rules: [{ tool: 'a', mode: 'maybe' }] }, /rules\.0\.mode must be one of allow, deny, ask, may_deny_on_args/],
      [{ rules: [{ tool: 'a', mode: 'allow', conditions: [] }] }, /conditions are allowed only with the mode may_deny_on_args/],
      [{ rules: [{ tool: 'a', mode: 'may_deny_on_args', conditions: [cond('max', 'ten' as never)] }] }, /value must be a finite number for max/],
      [{ rules: [{ tool: 'a', mode: 'may_deny_on_args', conditions: [cond('equals', { a: 1 } as never)] }] }, /value must be a string, a finite number, a boolean or null/],
      [{ rules: [{ tool: 'a', mode: 'may_deny_on_args', conditions: [{ ...cond('max', 1), otherwise: 'allow' }] }] }, /otherwise must be deny or ask/],
      [{ rules: [{ tool: 'a', mode: 'may_deny_on_args', conditions: [cond('max', 1, 'a..b')] }] }, /path must not have an empty segment/],
    ] as const) {
      expect(() => parsePolicy(bad), JSON.stringify(bad)).toThrow(message);
    }
  });

  it('[MCP-TOOLS-35] the arguments hash is sha256 of canonical JSON: key order does not matter, values do', () => {
    expect(canonicalJson({ b: [1, { d: 1, c: 2 }], a: 'x', u: undefined })).toBe('{"a":"x","b":[1,{"c":2,"d":1}]}');
    const hex = createHash('sha256').update('{"a":1,"b":2}').digest('hex');
    expect(argumentsHash({ b: 2, a: 1 })).toBe(`sha256:${hex}`);
    expect(argumentsHash({ a: 1, b: 2 })).toBe(`sha256:${hex}`);
    expect(argumentsHash({ a: 1, b: 3 })).not.toBe(`sha256:${hex}`);
    expect(argumentsHash(undefined)).toBe(argumentsHash({}));
  });

  it('[MCP-TOOLS-35] canonical JSON sorts keys by code unit at every level, integer-like and escaped keys too, whatever order they came in', () => {
    // Integer-like keys are listed by the engine in numeric order first, whatever the order they were written in.
    expect(canonicalJson({ 10: 'a', 9: 'b', x: 1, '': 0 })).toBe('{"":0,"10":"a","9":"b","x":1}');
    expect(canonicalJson({ 'é': 1, e: 2, 'a"b': 3, Z: [undefined, null, { y: 1, x: undefined }] })).toBe('{"Z":[null,null,{"y":1}],"a\\"b":3,"e":2,"é":1}');
    // Written in order or not, the same members give the same text; one value apart, not.
    const members = Array.from({ length: 2000 }, (_, i) => [`k${(i * 7919) % 2000}`, i % 3 === 0 ? [i, { b: i, a: String(i) }] : i] as const);
    const shuffled = Object.fromEntries(members);
    const sorted = Object.fromEntries([...members].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    expect(canonicalJson(shuffled)).toBe(canonicalJson(sorted));
    expect(canonicalJson(sorted)).toBe(JSON.stringify(sorted, (_k, v) => (v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : 1))) : v)));
    expect(canonicalJson({ ...shuffled, k5: 'changed' })).not.toBe(canonicalJson(shuffled));
  });

  it('the decision log gathers decisions into one statement, cut short by a full batch or a read, and reports a failed write instead of losing it silently', async () => {
    const written: number[] = [];
    const errors: string[] = [];
    let fail = false;
    let release!: () => void;
    let gate: Promise<void> = Promise.resolve();
    const d = { accountId: 'a', principalId: 'p', tool: 't', argumentsHash: 'h', outcome: 'allow' as const, reason: null, decidedBy: 'policy' as const, surface: 'mcp' as const, targetKind: 'gateway' as const, targetId: 'g' };
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    const opts = {
      write: async (batch: readonly unknown[]) => {
        await gate;
        if (fail) throw new Error('database down');
        written.push(batch.length);
      },
      onError: (_err: unknown, context: string) => errors.push(context),
    };
    // Decisions that come within the window go out together, once the window ends.
    const slow = decisionLog({ ...opts, gatherMs: 150 });
    for (let i = 0; i < 3; i++) slow.add(d);
    await sleep(30);
    slow.add(d);
    expect(written).toEqual([]);
    await sleep(300);
    expect(written).toEqual([4]);
    // A read of the record does not wait for the window.
    slow.add(d);
    const t0 = performance.now();
    await slow.flush();
    expect(performance.now() - t0).toBeLessThan(100);
    expect(written).toEqual([4, 1]);
    // A full batch goes at once; what arrives while a write is in flight waits for it and goes next.
    written.length = 0;
    const log = decisionLog({ ...opts, gatherMs: 60_000, maxBatch: 3, maxQueue: 5 });
    gate = new Promise<void>((r) => (release = r));
    for (let i = 0; i < 5; i++) log.add(d);
    await sleep(10);
    release();
    await log.flush();
    expect(written).toEqual([3, 2]);
    // A dead database: past maxQueue decisions are dropped, and every loss is reported with its count.
    fail = true;
    gate = new Promise<void>((r) => (release = r));
    for (let i = 0; i < 8; i++) log.add(d);
    await sleep(10);
    release();
    await log.flush();
    expect(errors).toEqual(['autonomy decisions are being dropped until the database catches up', '3 autonomy decision(s) could not be recorded', '2 autonomy decision(s) could not be recorded']);
  });
});

describe.each(drivers)('autonomy policies and decisions on %s', (driver) => {
  let store: Store & { drop(): Promise<void> };
  let autonomy: Autonomy;
  const account = randomUUID();
  const other = randomUUID();
  const agent = randomUUID();
  const user = randomUUID();
  const viewer = randomUUID();
  const errors: string[] = [];
  const caller = (principalId: string, role: Caller['role'] = 'member'): Caller => ({ accountId: account, principalId, kind: 'user', role, via: 'api_key' });
  const onAgent = { kind: 'agent' as const, id: agent, accountId: account };
  const onGateway = { kind: 'gateway' as const, id: randomUUID(), accountId: account };

  beforeAll(async () => {
    store = await freshStore(driver);
    for (const a of [account, other]) await store.accounts.create({ id: a, name: 'autonomy' });
    await store.db.query('insert into agents (id, account_id, handle, name) values ($1, $2, $3, $4)', [agent, account, `auto-${agent.slice(0, 8)}`, 'a']);
    for (const p of [user, viewer]) await store.db.query("insert into principals (id, account_id, kind, name) values ($1, $2, 'user', 'u')", [p, account]);
    autonomy = createAutonomy({ store, now: Date.now, onError: (_e, c) => errors.push(c) });
  });
  afterAll(() => store?.drop());

  it('[SURF-15] policies are set and read per scope and account; a subject of another account is unknown', async () => {
    expect(await autonomy.getPolicy(account, 'account')).toEqual({ scope: 'account', subjectId: null, rules: [], version: 0, updatedAt: null, updatedBy: null });
    const set = await autonomy.setPolicy(account, 'account', '', { rules: [{ tool: '*', mode: 'allow' }, { tool: 'calc_rm', mode: 'deny', reason: 'never' }] }, user);
    expect(set).toMatchObject({ scope: 'account', subjectId: null, version: 1, updatedBy: user });
    expect((await autonomy.setPolicy(account, 'account', '', { rules: [{ tool: '*', mode: 'allow' }, { tool: 'calc_rm', mode: 'deny', reason: 'never' }] }, user)).version).toBe(2);
    await autonomy.setPolicy(account, 'agent', agent, { rules: [{ tool: 'calc_add', mode: 'may_deny_on_args', conditions: [cond('max', 100, 'a', 'ask')] }] }, user);
    await autonomy.setPolicy(account, 'user', user, { rules: [{ tool: 'calc_mul', mode: 'ask' }] }, user);
    expect((await autonomy.getPolicy(account, 'agent', agent)).rules).toEqual([{ tool: 'calc_add', mode: 'may_deny_on_args', conditions: [cond('max', 100, 'a', 'ask')] }]);
    expect((await autonomy.getPolicy(other, 'account')).version).toBe(0);
    await expect(autonomy.getPolicy(other, 'agent', agent)).rejects.toMatchObject({ code: 'AUTONOMY_UNKNOWN_AGENT' });
    await expect(autonomy.setPolicy(other, 'user', user, { rules: [] }, user)).rejects.toMatchObject({ code: 'AUTONOMY_UNKNOWN_PRINCIPAL' });
  });

  it('[SURF-15] [MCP-TOOLS-07] outlooks and decisions follow the policies; the role rule comes first; MCP turns ask into a denial', async () => {
    const p = autonomy.policy;
    const u = caller(user);
    expect(await p.outlook(u, tool('calc_sub'), onAgent)).toBe('allow');
    expect(await p.outlook(u, tool('calc_rm'), onAgent)).toBe('deny');
    expect(await p.outlook(u, tool('calc_add'), onAgent)).toBe('may_deny_on_args');
    expect(await p.outlook(u, tool('calc_mul'), onGateway)).toBe('deny');
    // Another user has no user policy: the account's * allows.
    expect(await p.outlook(caller(viewer, 'member'), tool('calc_mul'), onGateway)).toBe('allow');
    // A viewer is denied whatever the policies say.
    expect(await p.outlook(caller(viewer, 'viewer'), tool('calc_sub'), onGateway)).toBe('deny');
    expect(await p.evaluate(caller(viewer, 'viewer'), tool('calc_sub'), {}, onGateway)).toEqual({ decision: 'deny', reason: 'the viewer role lacks execute authority' });
    // Anonymous callers of a public gateway are under the account's policy; no rule at all shows ungated.
    expect(await p.outlook(null, tool('calc_rm'), onGateway)).toBe('deny');
    expect(await p.outlook(null, tool('calc_sub'), onGateway)).toBe('allow');
    expect(await p.evaluate(u, tool('calc_add'), { a: 100 }, onAgent)).toEqual({ decision: 'allow' });
    expect(await p.evaluate(u, tool('calc_add'), { a: 101 }, onAgent)).toEqual({ decision: 'ask', reason: 'agent policy, rule calc_add: a max 100 not met' });
    // The agent policy is the agent's: the same tool on a gateway falls to the account's *.
    expect(await p.evaluate(u, tool('calc_add'), { a: 101 }, onGateway)).toEqual({ decision: 'allow' });
    expect(await p.evaluate(u, tool('calc_rm'), {}, onGateway)).toEqual({ decision: 'deny', reason: 'account policy, rule calc_rm: never' });
    expect(await p.evaluate(u, tool('calc_mul'), {}, onGateway)).toEqual({ decision: 'deny', reason: 'non_interactive_surface' });
    expect(await p.evaluate(u, tool('calc_mul'), {}, onAgent)).toEqual({ decision: 'ask', reason: 'user policy, rule calc_mul: ask' });
  });

  it('[SURF-15] every decision is recorded with who, tool, arguments hash, outcome, reason, surface and target; history pages newest first', async () => {
    const p = autonomy.policy;
    const u = caller(user);
    // What the tests before recorded is older than `since`.
    await autonomy.flush();
    await new Promise((r) => setTimeout(r, 20));
    const since = new Date().toISOString();
    await p.evaluate(u, tool('calc_sub'), { b: 2, a: 1 }, onGateway);
    await p.evaluate(u, tool('calc_mul'), { x: 1 }, onGateway);
    await p.evaluate(u, tool('calc_add'), { a: 500 }, onAgent);
    autonomy.record({ accountId: account, principalId: user, tool: 'calc_add', argumentsHash: argumentsHash({ a: 500 }), outcome: 'allow', reason: 'approved', decidedBy: 'human', target: onAgent, gateId: 'gate-1' });
    const page = await autonomy.decisions({ accountId: account, principalId: user, since }, 3);
    expect(page.more).toBe(true);
    expect(page.decisions.map((d) => [d.tool, d.outcome, d.decidedBy, d.surface])).toEqual([
      ['calc_add', 'allow', 'human', 'agent'],
      ['calc_add', 'ask', 'policy', 'agent'],
      ['calc_mul', 'deny', 'policy', 'mcp'],
    ]);
    expect(page.decisions[0]).toMatchObject({ accountId: account, principalId: user, argumentsHash: argumentsHash({ a: 500 }), reason: 'approved', targetKind: 'agent', targetId: agent, gateId: 'gate-1' });
    expect(page.decisions[2]).toMatchObject({ reason: 'non_interactive_surface', targetKind: 'gateway', targetId: onGateway.id, gateId: null });
    const next = await autonomy.decisions({ accountId: account, principalId: user, since, before: page.decisions[2]!.id }, 3);
    expect(next.decisions[0]).toMatchObject({ tool: 'calc_sub', outcome: 'allow', argumentsHash: argumentsHash({ a: 1, b: 2 }), reason: 'account policy, rule *: allow' });
    expect((await autonomy.decisions({ accountId: account, outcome: 'ask' }, 10)).decisions.every((d) => d.outcome === 'ask')).toBe(true);
    expect((await autonomy.decisions({ accountId: account, targetKind: 'agent', targetId: agent, tool: 'calc_add', since }, 10)).decisions).toHaveLength(2);
    expect((await autonomy.decisions({ accountId: other }, 10)).decisions).toEqual([]);
    expect((await autonomy.decisions({ accountId: account, since: new Date(Date.now() + 60_000).toISOString() }, 10)).decisions).toEqual([]);
    expect(errors).toEqual([]);
  });

  it('[SURF-15] a policy set through this node is seen by the next call at once (the cache is dropped)', async () => {
    const u = caller(user);
    expect(await autonomy.policy.outlook(u, tool('calc_div'), onGateway)).toBe('allow');
    await autonomy.setPolicy(account, 'user', user, { rules: [{ tool: 'calc_div', mode: 'deny' }] }, user);
    expect(await autonomy.policy.outlook(u, tool('calc_div'), onGateway)).toBe('deny');
  });
});
