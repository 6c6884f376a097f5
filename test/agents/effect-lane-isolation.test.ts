import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { a2aCall, bearer, request } from '../helpers/a2a.ts';
import { bystanderTenant } from '../helpers/bystander.ts';
import { eventually, recordingModel, rulesFile, userMessage } from '../helpers/agents.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

/**
 * Model turns run in their account's effect lane, which has 128 units of room; a turn takes 2 and a tenant may take
 * half (runtime/compose.ts). So a tenant whose model hangs holds at most 32 turns, queues the rest, and another
 * tenant's agent answers at once beside them.
 */
describe('a tenant flooding model turns', () => {
  let p: TestPlatform;
  let model: Awaited<ReturnType<typeof recordingModel>>;
  let bystanderKey: string;
  const FLOOD = 48;
  const HELD_AT_MOST = 32;

  beforeAll(async () => {
    model = await recordingModel(undefined, { holdWhen: 'hold on' });
    p = await startTestPlatform({ env: { PLATFORM_SCRIPTED_RULES: await rulesFile(), PLATFORM_MODEL_PROVIDERS: `rec=${model.baseUrl}`, PLATFORM_AGENT_STEP_TIMEOUT_SECONDS: '60' } });
    const admin = p.node.services.admin;
    await admin.createAgent({ account: p.node.demo!.accountId, handle: 'flooded', name: 'Flooded', model: 'rec/demo' });
    const other = await bystanderTenant(p);
    bystanderKey = other.key;
    await admin.createAgent({ account: other.accountId, handle: 'beside', name: 'Beside', model: 'rec/demo' });
  });
  afterAll(async () => {
    await p?.close();
    await model?.close();
  });

  it("holds at most half of the node's effect lane: its other sends queue, and another tenant's agent answers at once", { timeout: 60_000 }, async () => {
    const flood = Array.from({ length: FLOOD }, () =>
      a2aCall(p, request('SendMessage', { message: userMessage('hold on, please') }), { handle: 'flooded', headers: bearer(p.node.demo!.serviceKey) }),
    );
    // Exactly as many turns as the tenant's half holds reach the model; the rest wait in the lane, not at the model.
    await eventually(async () => (model.held() === HELD_AT_MOST ? true : undefined));
    await new Promise((r) => setTimeout(r, 300));
    expect(model.held()).toBe(HELD_AT_MOST);

    const started = performance.now();
    const beside = await a2aCall(p, request('SendMessage', { message: userMessage('hello there') }), { handle: 'beside', headers: bearer(bystanderKey) });
    const tookMs = performance.now() - started;
    expect(beside.status).toBe(200);
    expect(beside.json.result.message.parts[0].text).toBe('plain answer');
    // Before the lane served a costly call while the other tenant sat at its cap, this took the flood's whole minute.
    expect(tookMs).toBeLessThan(2_000);
    expect(model.held()).toBe(HELD_AT_MOST);

    // Released, every queued send is served in turn: none is refused or lost.
    model.release();
    const answers = await Promise.all(flood);
    expect(answers.map((a) => a.status)).toEqual(Array(FLOOD).fill(200));
    expect(answers.map((a) => a.json.result.message.parts[0].text)).toEqual(Array(FLOOD).fill('plain answer'));
  });
});
