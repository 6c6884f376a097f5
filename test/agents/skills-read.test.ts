import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sdkClient, sdkMessage, sdkText } from '../helpers/a2a.ts';
import { recordingModel, rulesFile } from '../helpers/agents.ts';
import { aguiAgent, aguiRun } from '../helpers/agui.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

const RULES = `name: demo
rules:
  - when: { after_tool: list_skills }
    reply: "Skills: {{result}}"
  - when: { after_tool: read_skill }
    reply: "Loaded: {{result}}"
  - when: { contains: which skills, tool: list_skills }
    call: { tool: list_skills, arguments: {} }
  - when: { contains: read file, tool: read_skill }
    call: { tool: read_skill, arguments: { skill: packing, path: "{{after:read file}}" } }
  - when: { contains: follow the skill, tool: read_skill }
    call: { tool: read_skill, arguments: { skill: "{{after:follow the skill}}" } }
  - reply: "plain answer"
`;

const PACKING = '---\nname: packing\ndescription: How to pack an order.\n---\n\n# Packing\n\nUse the box sizes in boxes.md.\n';
const BOXES = 'S 20x20, M 40x30, L 60x40\n';


/** The skills read surface (issue 15 §1): an agent lists its skills and loads one when a task needs it. */
describe('skills read on demand', () => {
  let p: TestPlatform;
  let model: Awaited<ReturnType<typeof recordingModel>>;
  const owner = () => ({ authorization: `Bearer ${p.node.demo!.userKey}` });

  beforeAll(async () => {
    model = await recordingModel(RULES);
    p = await startTestPlatform({ env: { PLATFORM_SCRIPTED_RULES: await rulesFile(RULES), PLATFORM_MODEL_PROVIDERS: `rec=${model.baseUrl}` } });
    const agent = await p.node.services.admin.createAgent({ account: p.node.demo!.accountId, handle: 'packer', name: 'Packer', instructions: 'Pack orders.', model: 'rec/demo' });
    const made = await p.call('POST', '/v1/skills', { headers: owner(), json: { files: [{ path: 'SKILL.md', content: PACKING }, { path: 'boxes.md', content: BOXES }] } });
    expect(made.status).toBe(201);
    expect((await p.call('PUT', `/v1/skills/${made.json.data.id}/bindings/${agent.id}`, { headers: owner() })).status).toBe(200);
  }, 60_000);
  afterAll(async () => {
    await p?.close();
    await model?.close();
  });

  it('[SURF-12] the agent lists its skills and loads one when asked, through the official A2A client; the prompt carries names, not bodies', async () => {
    const client = await sdkClient(p, p.node.demo!.serviceKey, 'packer');
    model.requests.length = 0;
    const listed = (await client.sendMessage(sdkMessage('which skills do you have?'))) as any;
    expect(JSON.parse(sdkText(listed).replace(/^Skills: /, ''))).toEqual({
      skills: [{ name: 'packing', description: 'How to pack an order.', version: 1, files: [{ path: 'SKILL.md', size: Buffer.byteLength(PACKING) }, { path: 'boxes.md', size: BOXES.length }] }],
    });
    const system = String(model.requests[0]!.messages[0]!.content);
    expect(system).toContain('- packing: How to pack an order.');
    expect(system).not.toContain('Use the box sizes');
    expect((model.requests[0]!.tools as any[]).map((t) => t.function.name).sort()).toEqual(['list_skills', 'read_skill']);

    const loaded = (await client.sendMessage(sdkMessage('follow the skill packing'))) as any;
    expect(sdkText(loaded)).toBe(`Loaded: ${PACKING}`);
    const file = (await client.sendMessage(sdkMessage('read file boxes.md'))) as any;
    expect(sdkText(file)).toBe(`Loaded: ${BOXES}`);
    const missing = (await client.sendMessage(sdkMessage('read file nope.md'))) as any;
    expect(sdkText(missing)).toBe('Loaded: the skill packing has no file "nope.md"; its files: SKILL.md, boxes.md');
  });

  it('[SURF-12] the same skill loads over AG-UI with the official HttpAgent', async () => {
    const r = await aguiRun(aguiAgent(p, p.node.demo!.serviceKey, { handle: 'packer' }), 'follow the skill packing');
    expect(r.error).toBeNull();
    expect(r.events.find((e) => e.type === 'TOOL_CALL_START')).toMatchObject({ toolCallName: 'read_skill' });
    expect((r.events.find((e) => e.type === 'TOOL_CALL_RESULT') as any).content).toBe(PACKING);
  });
});
