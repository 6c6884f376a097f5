import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { startCliNode } from '../helpers/cli-node.ts';

const DEF = {
  name: 'hello',
  description: 'Waits for a go, then greets.',
  start: 'wait',
  steps: { wait: { type: 'signal', signal: 'go', next: 'done' }, done: { type: 'succeed', output: 'hello {{steps.wait.payload.name}}' } },
};

/** The operator puts a workflow; the API's CLI reads, attaches and runs it (each command with --json). */
describe('platform admin workflow, platform workflows, platform runs', () => {
  let node: Awaited<ReturnType<typeof startCliNode>>;
  let accountId: string;
  let gatewayId: string;
  beforeAll(async () => {
    node = await startCliNode('platform-workflows-cli-');
    accountId = (await runCli(['agents', 'show', 'demo', '--json'], node.env)).json.account_id;
    gatewayId = (await runCli(['gateways', 'show', 'demo', '--json'], node.env)).json.id;
  }, 120_000);
  afterAll(async () => node?.close());

  it('[SURF-13] [SURF-17] puts a workflow as the operator, attaches it to a gateway, runs it, signals it to completion', async () => {
    const file = path.join(node.dataDir, 'hello.json');
    writeFileSync(file, JSON.stringify(DEF));
    const bad = path.join(node.dataDir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ ...DEF, start: 'nowhere' }));
    const [put, invalid] = await Promise.all([runCli(['admin', 'workflow', 'put', '--account', accountId, '--file', file, '--json'], node.env), runCli(['admin', 'workflow', 'put', '--account', accountId, '--file', bad, '--json'], node.env)]);
    expect(put.code, put.stderr).toBe(0);
    expect(put.json).toMatchObject({ name: 'hello', version: 1 });
    expect([invalid.code, invalid.json.error.code]).toEqual([1, 'WORKFLOW_INVALID']);
    const id = put.json.id as string;
    const [list, attach, started] = await Promise.all([
      runCli(['workflows', 'list', '--json'], node.env),
      runCli(['workflows', 'attach', id, '--gateway', gatewayId, '--json'], node.env),
      runCli(['runs', 'start', id, '--json'], node.env),
    ]);
    expect(list.json.workflows.map((w: { name: string }) => w.name)).toEqual(['hello']);
    expect(attach.json).toEqual({ workflow_id: id, target: { kind: 'gateway', id: gatewayId }, changed: true });
    const runId = started.json.id as string;
    const [attached, signaled, wrong] = await Promise.all([
      runCli(['workflows', 'attached', '--gateway', gatewayId, '--json'], node.env),
      runCli(['runs', 'signal', runId, 'go', '--payload', '{"name":"Ada"}', '--json'], node.env),
      runCli(['runs', 'cancel', 'no-such-run', '--json'], node.env),
    ]);
    expect(attached.json.workflows.map((w: { id: string }) => w.id)).toEqual([id]);
    expect(signaled.json).toMatchObject({ id: runId });
    expect([wrong.code, wrong.json.error.code]).toEqual([1, 'WORKFLOW_RUN_NOT_FOUND']);
    const shown = await runCli(['runs', 'show', runId, '--json'], node.env);
    expect(shown.json).toMatchObject({ status: 'completed', output: 'hello Ada' });
  }, 150_000);
});
