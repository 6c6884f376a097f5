import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rulesFile } from '../helpers/agents.ts';
import { ROOT, runCli } from '../helpers/cli.ts';
import { startCliNode } from '../helpers/cli-node.ts';

// The demo agent's own rules, with one more in front: "… slowly" after the calculator answers word by word, half a
// second apart, so a test can watch an answer arrive and cancel its task while it runs.
const WORDS = Array.from({ length: 60 }, (_, i) => `w${i + 1}`).join(' ');
const RULES = readFileSync(path.join(ROOT, 'runtime/models/demo-rules.yaml'), 'utf8').replace(
  /^rules:\n/m,
  `rules:\n  - when: { after_tool: calc_add, contains: slowly }\n    reply: "${WORDS}"\n    delay_ms: 500\n`,
);

const lines = (s: string) => s.split('\n').filter((l) => l !== '');

describe('platform admin agent token, agents send and tasks list|get|cancel, against a running node', () => {
  let node: Awaited<ReturnType<typeof startCliNode>>;
  let env: Record<string, string>;
  let serviceKey: string;
  let accountId: string;
  let agentId: string;

  beforeAll(async () => {
    node = await startCliNode('platform-agent-calls-', { PLATFORM_SCRIPTED_RULES: await rulesFile(RULES) });
    // PORT gives the CLI the agent's URL (http://agent-demo.localhost:<port>), as PLATFORM_DOMAIN and the port do for a user.
    env = { ...node.env, PORT: String(node.server.port), PLATFORM_AGENT_KEY: '' };
    serviceKey = node.serviceKey;
    const demo = (await runCli(['agents', 'show', 'demo', '--json'], env)).json as { id: string; account_id: string; capabilities: string[] };
    ({ id: agentId, account_id: accountId } = demo);
    // The demo seed binds its calculator to the demo agent, which calls calc_add for "add 2 and 40".
    expect(demo.capabilities).toHaveLength(1);
  }, 180_000);
  afterAll(() => node?.close());

  it('[A2A-AUTH-07] [A2A-AUTH-08] platform admin agent token mints a token the agent gateway admits, and refuses one it would not admit', async () => {
    const [service, viewer, user, other] = await Promise.all([
      runCli(['admin', 'principal', 'create', '--account', accountId, '--name', 'cli-integration', '--json'], env),
      runCli(['admin', 'principal', 'create', '--account', accountId, '--name', 'cli-viewer', '--role', 'viewer', '--json'], env),
      runCli(['admin', 'user', 'create', '--account', accountId, '--email', 'cli-user@example.com', '--password', 'a long password', '--json'], env),
      runCli(['admin', 'account', 'create', '--name', 'Other', '--json'], env),
    ]);
    const stranger = await runCli(['admin', 'principal', 'create', '--account', other.json.id, '--name', 'stranger', '--json'], env);

    const before = Date.now();
    const minted = await runCli(['admin', 'agent', 'token', '--agent', 'demo', '--principal', service.json.id, '--expires-in', '600', '--json'], env);
    expect(minted.code, minted.stderr).toBe(0);
    expect(minted.json).toMatchObject({ audience: `urn:platform:agent:${agentId}`, agent_id: agentId, principal_id: service.json.id, expires_in: 600 });
    expect(minted.json.token).toMatch(/^eyJ[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(Date.parse(minted.json.expires_at) - before).toBeGreaterThan(590_000);
    expect(Date.parse(minted.json.expires_at) - before).toBeLessThan(610_000);
    // By agent id as well as handle; a user's token is admitted (only a user's API key is refused); human output.
    const forUser = await runCli(['admin', 'agent', 'token', '--agent', agentId, '--principal', user.json.id], env);
    expect(forUser.code, forUser.stderr).toBe(0);
    expect(forUser.stdout).toMatch(new RegExp(`^token: eyJ\\S+\\naudience: urn:platform:agent:${agentId}\\n[\\s\\S]*expires_in: 3600\\nexpires_at: \\S+Z\\n$`));
    expect(forUser.stderr).toMatch(/PLATFORM_AGENT_KEY=<token> platform agents send/);

    const [byToken, byUserToken] = await Promise.all([
      runCli(['agents', 'send', 'demo', 'echo hello', '--key', minted.json.token], env),
      runCli(['agents', 'send', 'demo', 'echo hi there'], { ...env, PLATFORM_AGENT_KEY: /^token: (\S+)$/m.exec(forUser.stdout)![1]! }),
    ]);
    expect(byToken.code, byToken.stderr).toBe(0);
    expect(byToken.stdout).toBe('hello\n');
    expect(byUserToken.code, byUserToken.stderr).toBe(0);
    expect(byUserToken.stdout).toBe('hi there\n');

    const refused = await Promise.all([
      runCli(['admin', 'agent', 'token', '--agent', 'nope', '--principal', service.json.id, '--json'], env),
      runCli(['admin', 'agent', 'token', '--agent', 'demo', '--principal', '00000000-0000-4000-8000-000000000000', '--json'], env),
      runCli(['admin', 'agent', 'token', '--agent', 'demo', '--principal', stranger.json.id, '--json'], env),
      runCli(['admin', 'agent', 'token', '--agent', 'demo', '--principal', viewer.json.id, '--json'], env),
      runCli(['admin', 'agent', 'token', '--agent', 'demo', '--principal', service.json.id, '--expires-in', '3601', '--json'], env),
      runCli(['admin', 'agent', 'token', '--agent', 'demo', '--principal', service.json.id, '--expires-in', '0', '--json'], env),
    ]);
    expect(refused.map((r) => r.code)).toEqual([1, 1, 1, 1, 1, 1]);
    expect(refused.map((r) => r.json.error)).toEqual([
      { code: 'ADMIN_NOT_FOUND', message: 'no agent "nope"' },
      { code: 'ADMIN_NOT_FOUND', message: 'no principal 00000000-0000-4000-8000-000000000000' },
      { code: 'ADMIN_INVALID', message: `principal ${stranger.json.id} is not a member of agent demo's account` },
      { code: 'ADMIN_INVALID', message: `principal ${viewer.json.id} (role viewer) has no execute authority on agents: the gateway would refuse its token` },
      { code: 'ADMIN_INVALID', message: '--expires-in must be 1 to 3600 seconds (got 3601)' },
      { code: 'ADMIN_INVALID', message: '--expires-in must be 1 to 3600 seconds (got 0)' },
    ]);
    const usage = await Promise.all([
      runCli(['admin', 'agent', 'token', '--agent', 'demo'], env),
      runCli(['admin', 'agent', 'token', '--agent', 'demo', '--principal', service.json.id, '--expires-in', 'soon'], env),
    ]);
    expect(usage.map((r) => r.code)).toEqual([2, 2]);
    expect(usage[0]!.stderr).toMatch(/--principal is required/);
    expect(usage[1]!.stderr).toMatch(/--expires-in takes a whole number of seconds/);
  }, 240_000);

  it('[A2A-TASK-13] [A2A-TASK-18] a bare reply prints its text and, on stderr, the context; --context continues that thread', async () => {
    const first = await runCli(['agents', 'send', 'demo', 'echo hello', '--key', serviceKey], env);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toBe('hello\n');
    const ctx = /^context (\S+) \(a reply, no task; continue the thread with --context \1\)$/m.exec(first.stderr)![1]!;
    const next = await runCli(['agents', 'send', 'demo', 'echo again', '--context', ctx, '--json'], { ...env, PLATFORM_AGENT_KEY: serviceKey });
    expect(next.code, next.stderr).toBe(0);
    const frames = lines(next.stdout).map((l) => JSON.parse(l));
    expect(frames).toEqual([{ jsonrpc: '2.0', id: expect.any(String), result: { message: expect.objectContaining({ role: 'ROLE_AGENT', parts: [{ text: 'again' }], contextId: ctx }) } }]);
    expect(next.stderr).toMatch(new RegExp(`^context ${ctx} `));
  }, 120_000);

  it('[A2A-TASK-12] [A2A-STREAM-09] a run that calls a tool streams its answer: appended chunks once each, the final text equal to the artifact; --json prints one frame a line', async () => {
    const human = await runCli(['agents', 'send', 'demo', 'add 2 and 40', '--key', serviceKey], env);
    expect(human.code, human.stderr).toBe(0);
    // The chunks "The ", "sum ", "is ", "42." and then the whole "The sum is 42." (lastChunk): the text once.
    expect(human.stdout).toBe('The sum is 42.\n');
    expect(human.stderr).toMatch(/^task \S+ TASK_STATE_COMPLETED, context \S+ \(continue the thread with --context \S+\)$/m);

    const json = await runCli(['agents', 'send', 'demo', 'add 2 and 40', '--key', serviceKey, '--json'], env);
    expect(json.code, json.stderr).toBe(0);
    const frames = lines(json.stdout).map((l) => JSON.parse(l) as { id: string; result: Record<string, any> });
    expect(new Set(frames.map((f) => f.id)).size).toBe(1);
    for (const f of frames) expect(Object.keys(f.result)).toHaveLength(1);
    expect(Object.keys(frames[0]!.result)).toEqual(['task']);
    const updates = frames.filter((f) => f.result.artifactUpdate).map((f) => f.result.artifactUpdate);
    expect(updates.filter((u) => u.append).length).toBeGreaterThan(0);
    expect(updates.at(-1)).toMatchObject({ append: false, lastChunk: true, artifact: { parts: [{ text: 'The sum is 42.' }] } });
    expect(frames.at(-1)!.result.statusUpdate.status.state).toBe('TASK_STATE_COMPLETED');
    expect(json.stderr).toMatch(new RegExp(`^task ${frames[0]!.result.task.id} TASK_STATE_COMPLETED, context ${frames[0]!.result.task.contextId} `));
  }, 120_000);

  it('[A2A-RPC-10] [A2A-RPC-11] tasks list, get and cancel: a completed task reads back with its answer, and canceling it is -32002 said plainly', async () => {
    const k = { ...env, PLATFORM_AGENT_KEY: serviceKey };
    const sent = await runCli(['agents', 'send', 'demo', 'what is 5 plus 6', '--task', 'cli-task-1', '--json'], k);
    expect(sent.code, sent.stderr).toBe(0);
    const ctx = JSON.parse(lines(sent.stdout)[0]!).result.task.contextId as string;

    const [list, byContext, completed, page, get, getJson] = await Promise.all([
      runCli(['tasks', 'list', '--agent', 'demo'], k),
      runCli(['tasks', 'list', '--agent', 'demo', '--context', ctx, '--json'], k),
      runCli(['tasks', 'list', '--agent', 'demo', '--state', 'completed', '--json'], k),
      runCli(['tasks', 'list', '--agent', 'demo', '--page-size', '1', '--json'], k),
      runCli(['tasks', 'get', 'cli-task-1', '--agent', 'demo'], k),
      runCli(['tasks', 'get', 'cli-task-1', '--agent', 'demo', '--json'], k),
    ]);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/^ID\s+STATE\s+TIMESTAMP\s+CONTEXT\n/);
    expect(list.stdout).toMatch(new RegExp(`^cli-task-1\\s+TASK_STATE_COMPLETED\\s+\\S+Z\\s+${ctx}$`, 'm'));
    expect(byContext.json).toMatchObject({ tasks: [{ id: 'cli-task-1', contextId: ctx, status: { state: 'TASK_STATE_COMPLETED' } }], nextPageToken: '', totalSize: 1 });
    expect(completed.json.tasks.map((t: { id: string }) => t.id)).toContain('cli-task-1');
    expect(page.json).toMatchObject({ pageSize: 1, tasks: [expect.anything()], nextPageToken: expect.stringMatching(/.+/) });
    const rest = await runCli(['tasks', 'list', '--agent', 'demo', '--page-size', '1', '--page-token', page.json.nextPageToken, '--json'], k);
    expect(rest.json.tasks[0].id).not.toBe(page.json.tasks[0].id);
    expect(get.code, get.stderr).toBe(0);
    expect(get.stdout).toMatch(new RegExp(`^id: cli-task-1\\nstate: TASK_STATE_COMPLETED\\ntimestamp: \\S+Z\\ncontext: ${ctx}\\nasked: what is 5 plus 6\\nanswer:\\nThe sum is 11\\.\\n$`));
    expect(getJson.json).toMatchObject({ id: 'cli-task-1', artifacts: [{ parts: [{ text: 'The sum is 11.' }] }] });

    const [cancel, cancelJson, missing, badState] = await Promise.all([
      runCli(['tasks', 'cancel', 'cli-task-1', '--agent', 'demo'], k),
      runCli(['tasks', 'cancel', 'cli-task-1', '--agent', 'demo', '--json'], k),
      runCli(['tasks', 'get', 'no-such-task', '--agent', 'demo'], k),
      runCli(['tasks', 'list', '--agent', 'demo', '--state', 'done'], k),
    ]);
    expect(cancel.code).toBe(1);
    expect(cancel.stderr).toBe('error: task cli-task-1 has ended (TASK_STATE_COMPLETED) and cannot be canceled [JSON-RPC -32002 TASK_NOT_CANCELABLE]\n');
    expect(cancelJson.json.error).toMatchObject({ code: '-32002', message: expect.stringMatching(/cannot be canceled/) });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/task no-such-task not found \[JSON-RPC -32001 TASK_NOT_FOUND\]/);
    expect(badState.code).toBe(2);
    expect(badState.stderr).toMatch(/--state takes one of TASK_STATE_SUBMITTED, TASK_STATE_WORKING/);
  }, 180_000);

  it('[A2A-RPC-11] [A2A-STREAM-11] the answer shows as it arrives; canceling its task from another CLI ends the send with the state', async () => {
    const k = { ...env, PLATFORM_AGENT_KEY: serviceKey };
    let seen = '';
    let sending: Awaited<ReturnType<typeof runCli>> | undefined;
    const arrived = new Promise<void>((resolve) => {
      void runCli(['agents', 'send', 'demo', 'add 1 and 2 slowly', '--task', 'cli-slow-1'], k, {
        timeoutMs: 90_000,
        onStdout: (out) => {
          seen = out;
          if (/w2 /.test(out)) resolve();
        },
      }).then((r) => (sending = r));
    });
    // Words are printed while the model still streams the rest (60 words, half a second apart).
    await arrived;
    expect(seen).toMatch(/^w1 w2 /);
    const working = await runCli(['tasks', 'list', '--agent', 'demo', '--state', 'TASK_STATE_WORKING', '--json'], k);
    expect(working.json.tasks.map((t: { id: string }) => t.id)).toEqual(['cli-slow-1']);
    const canceled = await runCli(['tasks', 'cancel', 'cli-slow-1', '--agent', 'demo'], k);
    expect(canceled.code, canceled.stderr).toBe(0);
    expect(canceled.stdout).toMatch(/^id: cli-slow-1\nstate: TASK_STATE_CANCELED\n/);
    const until = Date.now() + 30_000;
    while (!sending && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
    expect(sending!.code).toBe(1);
    expect(sending!.stdout).not.toMatch(/w60/);
    expect(sending!.stderr).toMatch(/^task cli-slow-1 TASK_STATE_CANCELED, context \S+ /m);
    expect(sending!.stderr).toMatch(/error: the task ended TASK_STATE_CANCELED: Canceled by /);
  }, 180_000);

  it('[A2A-AUTH-02] [A2A-AUTH-13] without a credential it is a usage error naming both ways; a user key gets the 403 message, a bad key the 401', async () => {
    const [none, noneTasks, userKey, badKey, unknownAgent] = await Promise.all([
      runCli(['agents', 'send', 'demo', 'echo hello'], env),
      runCli(['tasks', 'list', '--agent', 'demo'], env),
      runCli(['agents', 'send', 'demo', 'echo hello', '--key', env.PLATFORM_API_KEY!], env),
      runCli(['tasks', 'list', '--agent', 'demo', '--json'], { ...env, PLATFORM_AGENT_KEY: 'ak-0123_nope' }),
      runCli(['agents', 'send', 'nobody', 'echo hello', '--key', serviceKey], env),
    ]);
    for (const r of [none, noneTasks]) {
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/no credential for the agent gateway: pass --key <credential> or set PLATFORM_AGENT_KEY .*platform admin agent token/);
    }
    expect(userKey.code).toBe(1);
    expect(userKey.stderr).toBe(
      "error: the agent gateway refused the call (HTTP 403: forbidden: a user's API key cannot call an agent; use a service principal's key or an agent token)\n",
    );
    expect(badKey.code).toBe(1);
    expect(badKey.json.error.code).toBe('A2A_CREDENTIAL_INVALID');
    expect(badKey.stderr).toMatch(/did not accept the credential \(HTTP 401: invalid credential: .*\); use a service principal's API key, or an agent token from `platform admin agent token`/);
    expect(unknownAgent.code).toBe(1);
    expect(unknownAgent.stderr).toMatch(/no agent at host "agent-nobody\.localhost:\d+" \(HTTP 404\)/);
  }, 120_000);
});
