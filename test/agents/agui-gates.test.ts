import { HttpAgent } from '@ag-ui/client';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintAgentToken } from '../../runtime/index.ts';
import { agentOrigin, sdkFetch } from '../helpers/a2a.ts';
import { bindCalc, rulesFile } from '../helpers/agents.ts';
import { demoUser } from '../helpers/identity.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { aguiRun as run } from '../helpers/agui.ts';

describe('approval gates over AG-UI', () => {
  let p: TestPlatform;
  let token: string;
  beforeAll(async () => {
    p = await startTestPlatform({ env: { PLATFORM_SCRIPTED_RULES: await rulesFile() } });
    await bindCalc(p);
    const agentId = (await p.node.services.store.agents.byHandle('demo'))!.id;
    await p.node.services.autonomy.setPolicy(p.node.demo!.accountId, 'agent', agentId, { rules: [{ tool: 'calc_add', mode: 'ask' }] }, 'test');
    const user = (await demoUser(p)).userId;
    token = (await mintAgentToken({ store: p.node.services.store, tokens: p.node.services.agentTokens }, { accountId: p.node.demo!.accountId, agentId, subject: user, actors: [] })).token;
  });
  afterAll(() => p.close());

  it('[A2A-RPC-03] [A2A-GATE-01] a gated call ends the run with an interrupt naming the gate; the next run resumes it with resume[]', async () => {
    const agent = new HttpAgent({ url: `${agentOrigin(p)}/agui`, fetch: sdkFetch(token) as never });
    const first = await run(agent, 'add 2 and 40');
    expect(first.error).toBeNull();
    expect(first.types).toEqual(['RUN_STARTED', 'TOOL_CALL_START', 'TOOL_CALL_ARGS', 'TOOL_CALL_END', 'RUN_FINISHED']);
    const start = first.events[1] as any;
    const finished = first.events.at(-1) as any;
    expect(finished.outcome.type).toBe('interrupt');
    const interrupt = finished.outcome.interrupts[0];
    expect(interrupt).toMatchObject({ reason: 'tool_call', toolCallId: start.toolCallId });
    const gate = interrupt.metadata['platform.gate_decision'];
    expect(gate).toMatchObject({ gateId: interrupt.id, tool: 'calc_add', arguments: { a: 2, b: 40 }, contextId: agent.threadId });
    expect((await p.node.services.gates.get(p.node.demo!.accountId, interrupt.id))?.state).toBe('pending');

    const resumed = await run(agent, null, { resume: [{ interruptId: interrupt.id, status: 'resolved', payload: { decision: 'approve' } }] });
    expect(resumed.error).toBeNull();
    expect(resumed.types[0]).toBe('RUN_STARTED');
    expect(resumed.types).toContain('TOOL_CALL_RESULT');
    const answer = resumed.events.filter((e) => e.type === 'TEXT_MESSAGE_CONTENT').map((e: any) => e.delta).join('');
    expect(answer).toBe('The sum is 42.');
    expect((resumed.events.at(-1) as any).outcome).toEqual({ type: 'success' });
    expect((await p.node.services.gates.get(p.node.demo!.accountId, interrupt.id))?.state).toBe('approved');
  });
});
