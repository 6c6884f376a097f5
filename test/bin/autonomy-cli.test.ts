import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { argumentsHash, type ToolEntry } from '../../runtime/index.ts';
import { runCli } from '../helpers/cli.ts';
import { callerOf } from '../helpers/mcp.ts';
import { cliPlatform } from '../helpers/cli-platform.ts';

describe('platform autonomy get, set, decisions', () => {
  let agentId: string;
  const cli = cliPlatform('autonomy-cli-');
  beforeAll(async () => {
    agentId = (await cli.p.node.services.store.agents.byHandle('demo'))!.id;
  });

  it('[SURF-15] sets and reads the policy of an agent; API errors exit 1 with their code, usage errors 2', async () => {
    const file = path.join(cli.dir, 'policy.json');
    const rules = [{ tool: 'calc_add', mode: 'may_deny_on_args', conditions: [{ path: 'a', op: 'max', value: 10, otherwise: 'ask' }] }];
    writeFileSync(file, JSON.stringify({ rules }));
    const set = await runCli(['autonomy', 'set', '--agent', agentId, '--file', file, '--json'], cli.env);
    expect(set.code, set.stderr).toBe(0);
    expect(set.json).toMatchObject({ scope: 'agent', subject_id: agentId, rules, version: 1 });
    const got = await runCli(['autonomy', 'get', '--agent', agentId, '--json'], cli.env);
    expect(got.json).toEqual(set.json);
    const text = await runCli(['autonomy', 'get', '--agent', agentId], cli.env);
    expect(text.stdout).toMatch(new RegExp(`^agent ${agentId}: version 1, set \\S+\\n`));
    expect(text.stdout).toMatch(/calc_add\s+may_deny_on_args\s+\[\{"path":"a","op":"max","value":10,"otherwise":"ask"\}\]/);
    const caller = await callerOf(cli.p, cli.p.node.demo!.userKey);
    // The API's errors come back with their code, exit 1.
    writeFileSync(file, JSON.stringify({ rules: [{ tool: 'x', mode: 'sometimes' }] }));
    const bad = await runCli(['autonomy', 'set', '--file', file, '--json'], cli.env);
    expect(bad.code).toBe(1);
    expect(bad.json).toEqual({ error: { code: 'MGMT_INVALID_BODY', message: 'malformed request body: rules.0.mode must be one of allow, deny, ask, may_deny_on_args' } });
    const usage = await runCli(['autonomy', 'set', '--agent', agentId, '--user', caller.principalId, '--file', file], cli.env);
    expect([usage.code, usage.stderr]).toEqual([2, expect.stringMatching(/^give --agent or --user, not both\n/)]);
  }, 150_000);

  it('[SURF-15] lists decisions with filters and a cursor', async () => {
    const { autonomy } = cli.p.node.services;
    const caller = await callerOf(cli.p, cli.p.node.demo!.serviceKey);
    const onAgent = { kind: 'agent' as const, id: agentId, accountId: caller.accountId };
    await autonomy.policy.evaluate(caller, { name: 'calc_add' } as ToolEntry, { a: 1, b: 2 }, onAgent);
    await autonomy.policy.evaluate(caller, { name: 'calc_add' } as ToolEntry, { a: 11, b: 2 }, onAgent);
    const all = await runCli(['autonomy', 'decisions', '--agent', agentId, '--json'], cli.env);
    expect(all.code, all.stderr).toBe(0);
    expect(all.json.decisions.map((d: any) => [d.tool, d.outcome, d.arguments_hash])).toEqual([
      ['calc_add', 'ask', argumentsHash({ a: 11, b: 2 })],
      ['calc_add', 'allow', argumentsHash({ a: 1, b: 2 })],
    ]);
    const first = await runCli(['autonomy', 'decisions', '--agent', agentId, '--limit', '1'], cli.env);
    expect(first.stdout).toMatch(/calc_add\s+ask\s+policy\s+agent\s+agent\//);
    const cursor = /more: --cursor (\S+)/.exec(first.stdout)![1]!;
    const second = await runCli(['autonomy', 'decisions', '--agent', agentId, '--limit', '1', '--cursor', cursor, '--json'], cli.env);
    expect(second.json).toMatchObject({ decisions: [{ outcome: 'allow' }], next_cursor: null });
  }, 150_000);
});
