import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentCall, demoAgentCluster, type DemoAgentCluster, type Serve } from '../helpers/agent-cluster.ts';
import { eventually, userMessage } from '../helpers/agents.ts';
import { mustRun } from '../helpers/env.ts';
import { startReceiver, testCa, type Receiver, type TestCa } from '../helpers/push-receivers.ts';

async function rpc(node: Serve, key: string, method: string, params: unknown) {
  return (await (await agentCall(node, key, method, params)).body.json()) as { result?: any; error?: { code: number; message: string } };
}

describe.skipIf(!mustRun('cluster'))('push delivery across three node processes', () => {
  let c: DemoAgentCluster;
  let ca: TestCa;
  let receiver: Receiver;
  let key: string;
  let nodes: DemoAgentCluster['nodes'];

  beforeAll(async () => {
    ca = testCa(['127.0.0.1']);
    receiver = await startReceiver(ca);
    c = await demoAgentCluster({ leaseMs: 2000, env: { PLATFORM_PUSH_ALLOW_LOOPBACK: 'true', PLATFORM_EGRESS_EXTRA_CA_FILE: ca.caFile } });
    ({ key, nodes } = c);
  }, 120_000);

  afterAll(async () => {
    await c?.close();
    await receiver?.close();
    ca?.remove();
  }, 60_000);

  it("[A2A-PUSH-12] [A2A-PUSH-13] a config made on one node is delivered by the task's owner on another, even after the first node is gone", async () => {
    // A task id whose actor another node owns than the one the request goes to.
    let taskId = '';
    let owner = '';
    let entry = '';
    for (let i = 0; !entry; i++) {
      taskId = `push-${Date.now()}-${i}`;
      const roles = await c.roles(taskId);
      owner = roles.owner;
      entry = roles.others[0] ?? '';
    }
    const url = `${receiver.origin('127.0.0.1')}/cluster`;
    const sent = await rpc(nodes.get(entry)!, key, 'SendMessage', {
      message: userMessage('slow, pushed across nodes', { taskId }),
      configuration: { returnImmediately: true, taskPushNotificationConfig: { url, token: 'cluster-token' } },
    });
    expect(sent.error).toBeUndefined();
    expect(sent.result.task.status.state).toBe('TASK_STATE_WORKING');
    // The node that took the request (and stored the config) stops while the task still runs (the slow rule takes
    // ~3 s): the COMPLETED callback can only come from the owner.
    const gone = nodes.get(entry)!;
    gone.child.kill('SIGTERM');
    await gone.stopped;
    nodes.delete(entry);
    const done = await eventually(async () => receiver.inState('TASK_STATE_COMPLETED').find((r) => r.json.task.id === taskId), 30_000);
    expect(done.headers['a2a-notification-token']).toBe('cluster-token');
    const got = await rpc(nodes.get(owner)!, key, 'GetTask', { id: taskId });
    expect(done.json).toEqual({ task: got.result });
  }, 90_000);
});
