import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, startServe } from '../helpers/cli.ts';

describe('platform admin agent bind|unbind --agent-tool, against a running node', () => {
  let server: Awaited<ReturnType<typeof startServe>>;
  let env: Record<string, string>;
  let dataDir: string;
  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'platform-agent-tools-cli-'));
    server = await startServe({ PLATFORM_DATA_DIR: dataDir });
    env = { PLATFORM_DATA_DIR: dataDir };
  }, 120_000);
  afterAll(async () => {
    server?.child.kill('SIGTERM');
    await server?.stopped;
    rmSync(dataDir, { recursive: true, force: true });
  });

  const cli = async (...args: string[]) => runCli([...args, '--json'], env);

  // Each CLI run is a process of its own: the refusals and edge cases are tested in-process (test/agents/agent-tools.test.ts).
  it('binds an agent to another of its account as the tool agent_{handle}, shows it, and unbinds it; refuses the agent itself and a double flag', async () => {
    const demo = ((await cli('agents', 'list')).json as { handle: string; account_id: string }[]).find((a) => a.handle === 'demo')!;
    const asker = await cli('admin', 'agent', 'create', '--account', demo.account_id, '--handle', 'asker', '--name', 'Asker');
    const answerer = await cli('admin', 'agent', 'create', '--account', demo.account_id, '--handle', 'answer-desk', '--name', 'Answer desk', '--description', 'Answers questions');
    expect(asker.code, asker.stderr).toBe(0);

    const bind = await cli('admin', 'agent', 'bind', '--agent', 'asker', '--agent-tool', answerer.json.id);
    expect(bind.code, bind.stderr).toBe(0);
    expect(bind.json).toEqual({ agent_id: asker.json.id, agent_tool_id: answerer.json.id, tool: 'agent_answer_desk', bound: true, changed: true });
    const show = await cli('agents', 'show', 'asker');
    expect(show.json).toMatchObject({ handle: 'asker', capabilities: [], agents: [{ id: answerer.json.id, handle: 'answer-desk', tool: 'agent_answer_desk' }] });

    const self = await cli('admin', 'agent', 'bind', '--agent', 'asker', '--agent-tool', 'asker');
    expect(self.code).toBe(1);
    expect(self.json.error).toEqual({ code: 'ADMIN_INVALID', message: 'an agent cannot be bound to itself (asker)' });
    const both = await runCli(['admin', 'agent', 'bind', '--agent', 'asker', '--capability', 'calc', '--agent-tool', 'answer-desk'], env);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/give --capability <id\|name> or --agent-tool <id\|handle>/);

    const unbind = await cli('admin', 'agent', 'unbind', '--agent', 'asker', '--agent-tool', 'answer-desk');
    expect(unbind.json).toEqual({ agent_id: asker.json.id, agent_tool_id: answerer.json.id, tool: 'agent_answer_desk', bound: false });
  }, 120_000);
});
