import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { startCliNode } from '../helpers/cli-node.ts';

describe('platform agents list|show and admin agent create|bind|unbind, against a running node', () => {
  let node: Awaited<ReturnType<typeof startCliNode>>;
  let server: Awaited<ReturnType<typeof startCliNode>>['server'];
  let env: Record<string, string>;
  let calcArchive: string;
  beforeAll(async () => {
    node = await startCliNode('platform-agent-cli-');
    ({ server, env, calcArchive } = node);
  }, 120_000);
  afterAll(() => node?.close());

  it('the demo agent runs on the scripted model with the demo calc plugin bound; agents get instructions, a model and bound capabilities', async () => {
    const list = await runCli(['agents', 'list', '--json'], env);
    expect(list.code, list.stderr).toBe(0);
    const demo = (list.json as { handle: string; model: string; url: string; account_id: string; instructions: string; capabilities: string[] }[]).find((a) => a.handle === 'demo')!;
    const plugins = await runCli(['plugins', 'list', '--json'], env);
    expect(plugins.code, plugins.stderr).toBe(0);
    const calc = (plugins.json as { id: string; name: string }[]).find((c) => c.name === 'calc')!;
    expect(demo).toMatchObject({ model: 'scripted/demo', url: `http://agent-demo.localhost:${server.port}`, capabilities: [calc.id] });
    expect(demo.instructions).toMatch(/demo agent/);
    expect((await runCli(['agents', 'show', 'demo', '--json'], env)).json).toMatchObject({ handle: 'demo', capabilities: [calc.id] });

    const created = await runCli(['admin', 'agent', 'create', '--account', demo.account_id, '--handle', 'helper', '--name', 'Helper', '--instructions', 'Be terse.', '--json'], env);
    expect(created.code, created.stderr).toBe(0);
    // Without --model an agent gets PLATFORM_DEFAULT_MODEL.
    expect(created.json).toMatchObject({ handle: 'helper', model: 'scripted/demo', url: `http://agent-helper.localhost:${server.port}` });
    const badModel = await runCli(['admin', 'agent', 'create', '--account', demo.account_id, '--handle', 'other', '--name', 'Other', '--model', 'nowhere/gpt', '--json'], env);
    expect(badModel.code).toBe(1);
    expect(badModel.json.error).toMatchObject({ code: 'ADMIN_INVALID' });
    expect(badModel.json.error.message).toMatch(/no provider "nowhere" is configured \(providers: scripted/);
    const wrongRules = await runCli(['admin', 'agent', 'create', '--account', demo.account_id, '--handle', 'other', '--name', 'Other', '--model', 'scripted/gpt-4', '--json'], env);
    expect(wrongRules.json.error.message).toMatch(/serves the rules named "demo"/);

    const up = await runCli(['plugins', 'upload', calcArchive, '--json'], env);
    expect(up.code, up.stderr).toBe(0);
    // By capability name as well as by id; by agent handle as well as by id.
    const bind = await runCli(['admin', 'agent', 'bind', '--agent', 'helper', '--capability', 'test-calc', '--json'], env);
    expect(bind.code, bind.stderr).toBe(0);
    expect(bind.json).toMatchObject({ agent_id: created.json.id, capability_id: up.json.capability_id, bound: true, changed: true });
    expect((await runCli(['admin', 'agent', 'bind', '--agent', created.json.id, '--capability', up.json.capability_id, '--json'], env)).json).toMatchObject({ changed: false });
    const show = await runCli(['agents', 'show', 'helper', '--json'], env);
    expect(show.json).toMatchObject({ handle: 'helper', instructions: 'Be terse.', model: 'scripted/demo', capabilities: [up.json.capability_id] });
    expect((await runCli(['agents', 'show', 'helper'], env)).stdout).toMatch(/Be terse\./);

    const unbind = await runCli(['admin', 'agent', 'unbind', '--agent', 'helper', '--capability', 'test-calc', '--json'], env);
    expect(unbind.json).toMatchObject({ bound: false });
    const again = await runCli(['admin', 'agent', 'unbind', '--agent', 'helper', '--capability', 'test-calc', '--json'], env);
    expect(again.json.error.code).toBe('ADMIN_NOT_FOUND');
    expect((await runCli(['agents', 'show', 'no-such-agent', '--json'], env)).json.error).toMatchObject({ code: 'ADMIN_NOT_FOUND', message: 'no agent "no-such-agent"' });
    expect((await runCli(['admin', 'agent', 'bind', '--agent', 'helper', '--capability', 'nope', '--json'], env)).json.error.code).toBe('ADMIN_NOT_FOUND');
  }, 120_000);
});
