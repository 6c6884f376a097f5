import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import { agentOrigin, recordingBackend, sdkClient, sdkFetch } from '../helpers/a2a.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

/** The official A2A 1.0 client (@a2a-js/sdk 1.3.0) against the real node, as a peer system would call it. */
describe('agent gateway with the official A2A client', () => {
  describe('the node\'s own agent runtime', () => {
    let p: TestPlatform;
    beforeAll(async () => {
      p = await startTestPlatform();
    });
    afterAll(() => p.close());

    it('[A2A-RPC-09] [A2A-RPC-13] GetTask of an unknown task surfaces TaskNotFoundError with its code and ErrorInfo', async () => {
      const client = await sdkClient(p, p.node.demo!.serviceKey);
      const err = (await client.getTask({ tenant: '', id: 't1' }).catch((e: unknown) => e)) as Error & { envelopeCode?: number; data?: unknown; reason?: string };
      expect(err.name).toBe('TaskNotFoundError');
      expect(err.envelopeCode).toBe(-32001);
      expect(err.message).toMatch(/task t1 not found/);
      expect(err.data).toEqual([expect.objectContaining({ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'TASK_NOT_FOUND', domain: 'a2a-protocol.org' })]);
    });

    it('[A2A-CARD-16] GetExtendedAgentCard, through the client transport, returns the card the client resolved', async () => {
      // The client itself only asks for the extended card when the card claims one (ours does not, spec §4.3).
      const client = await sdkClient(p, p.node.demo!.serviceKey);
      const card = await client.getAgentCard();
      const transport = await new JsonRpcTransportFactory({ fetchImpl: sdkFetch(p.node.demo!.serviceKey) }).create(agentOrigin(p), card);
      expect(await transport.getExtendedAgentCard({ tenant: '' })).toEqual(card);
    });

    it('[A2A-AUTH-13] [A2A-AUTH-02] the client reports 401 and 403 with the gateway message', async () => {
      const anonymous = await sdkClient(p, null);
      await expect(anonymous.getTask({ tenant: '', id: 't1' })).rejects.toThrow(/missing credential/);
      const user = await sdkClient(p, p.node.demo!.userKey);
      await expect(user.getTask({ tenant: '', id: 't1' })).rejects.toThrow(/user's API key/);
    });
  });

  describe('a node with an agent runtime', () => {
    let p: TestPlatform;
    const rec = recordingBackend();
    beforeAll(async () => {
      p = await startTestPlatform({ a2aBackend: rec.backend });
    });
    afterAll(() => p.close());

    it('[A2A-RPC-01] [A2A-TASK-11] every unary method round-trips through the client in A2A 1.0 shapes', async () => {
      const client = await sdkClient(p, p.node.demo!.serviceKey);
      const sent = await client.sendMessage({ message: { messageId: 'm1', role: 1, parts: [{ content: { $case: 'text', value: 'hi' } }], taskId: 'task-9' } } as never);
      expect(sent).toMatchObject({ id: 'task-9', contextId: 'ctx-1', status: { state: 3 } });
      expect(rec.last().params).toMatchObject({ message: { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'hi' }], taskId: 'task-9' } });
      expect(await client.getTask({ tenant: '', id: 't1', historyLength: 2 })).toMatchObject({ id: 't1' });
      expect(rec.last().params).toEqual({ id: 't1', historyLength: 2 });
      expect(await client.cancelTask({ tenant: '', id: 't1' } as never)).toMatchObject({ status: { state: 5 } });
      expect(await client.listTasks({ tenant: '', contextId: '', status: 0, pageSize: 5, pageToken: '' } as never)).toMatchObject({ tasks: [], nextPageToken: '', pageSize: 5, totalSize: 0 });
      const cfg = await client.createTaskPushNotificationConfig({ tenant: '', id: '', taskId: 't1', url: 'https://example.com/hook', token: 'tok', authentication: { scheme: 'Bearer', credentials: 'c' } });
      expect(cfg).toMatchObject({ id: 'cfg-1', taskId: 't1', url: 'https://example.com/hook', token: 'tok' });
      expect(rec.last().params).toEqual({ taskId: 't1', url: 'https://example.com/hook', token: 'tok', authentication: { scheme: 'bearer', credentials: 'c' } });
      expect(await client.getTaskPushNotificationConfig({ tenant: '', taskId: 't1', id: 'cfg-1' })).toMatchObject({ id: 'cfg-1' });
      expect(await client.listTaskPushNotificationConfig({ tenant: '', taskId: 't1', pageSize: 0, pageToken: '' })).toMatchObject({ configs: [] });
      await client.deleteTaskPushNotificationConfig({ tenant: '', taskId: 't1', id: 'cfg-1' });
      expect(rec.last()).toMatchObject({ method: 'deletePushConfig', params: { taskId: 't1', id: 'cfg-1' } });
    });

    it('[A2A-TASK-24] a tenant the client sets is ignored: the call runs in the account of its credential', async () => {
      const client = await sdkClient(p, p.node.demo!.serviceKey);
      await client.getTask({ tenant: 'someone-else', id: 't1' });
      expect(rec.last().params).toEqual({ id: 't1' });
      expect(rec.last().ctx.accountId).toBe(p.node.demo!.accountId);
    });
  });
});
