import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSession, rpc } from '../helpers/mcp.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

/** The Plugin, Skill and Workflow Builder built-ins: tools over plugin builds, skills and workflows (issue 13 §3). */
describe('the builder built-ins', () => {
  let p: TestPlatform;
  let owner: Record<string, string>;
  let member: Record<string, string>;
  const call = async (headers: Record<string, string>, name: string, args: unknown) => {
    const r = await rpc(p, 'demo', { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name, arguments: args } }, headers);
    const text = r.message.result.content[0].text as string;
    return { isError: r.message.result.isError === true, text, json: (() => { try { return JSON.parse(text); } catch { return undefined; } })() };
  };

  beforeAll(async () => {
    p = await startTestPlatform();
    const { admin } = p.node.services;
    for (const b of ['builtin-plugin-builder', 'builtin-skill-builder', 'builtin-workflow-builder']) await admin.bindGateway({ gateway: 'demo', capability: b });
    owner = (await openSession(p, 'demo', { authorization: `Bearer ${p.node.demo!.userKey}` })).headers;
    const m = await admin.createUser({ account: p.node.demo!.accountId, email: 'builders-member@example.test', password: 'member-password', role: 'member' });
    member = (await openSession(p, 'demo', { authorization: `Bearer ${(await admin.createKey({ principal: m.id })).key}` })).headers;
  });
  afterAll(() => p.close());

  it('[SURF-12] [SURF-13] the Skill and Workflow Builders save what the API reads; a member may not; a bad definition says why', async () => {
    const skill = await call(owner, 'skill_save', { name: 'tone', description: 'How we write.', instructions: 'Be brief.', files: [{ path: 'examples.md', content: 'Short.' }] });
    expect(skill.json).toMatchObject({ name: 'tone', version: 1, created: true });
    const again = await call(owner, 'skill_save', { name: 'tone', description: 'How we write, v2.', instructions: 'Be briefer.' });
    expect(again.json).toMatchObject({ id: skill.json.id, version: 2, created: false });
    const content = await p.call('GET', `/v1/skills/${skill.json.id}/content`, { headers: { authorization: `Bearer ${p.node.demo!.userKey}` } });
    expect(content.json.data.files).toEqual([{ path: 'SKILL.md', size: expect.any(Number), content: '---\nname: tone\ndescription: "How we write, v2."\n---\n\nBe briefer.\n' }]);
    const wf = await call(owner, 'workflow_save', { definition: { name: 'ping', description: 'd', start: 'a', steps: { a: { type: 'succeed', output: 'pong' } } } });
    expect(wf.json).toMatchObject({ name: 'ping', version: 1 });
    const listed = await p.call('GET', '/v1/workflows', { headers: { authorization: `Bearer ${p.node.demo!.userKey}` } });
    expect(listed.json.data.workflows.map((w: { name: string }) => w.name)).toEqual(['ping']);
    const bad = await call(owner, 'workflow_save', { definition: { name: 'ping', description: 'd', start: 'zz', steps: { a: { type: 'succeed' } } } });
    expect([bad.isError, bad.text]).toEqual([true, expect.stringContaining('WORKFLOW_INVALID: start: names no step of this workflow')]);
    const denied = await call(member, 'skill_save', { name: 'x', description: 'x', instructions: 'x' });
    expect([denied.isError, denied.text]).toEqual([true, expect.stringContaining('saving a skill needs write authority')]);
  });

  it('[SURF-11] the Plugin Builder builds a plugin and answers with the finished build', async () => {
    const wit = 'package demo:twice;\nworld twice { export twice: func(n: s32) -> s32; }\n';
    const built = await call(owner, 'plugin_build', { name: 'twice', source: 'export function twice(n) { return n * 2; }', wit, world: 'twice' });
    expect(built.json, built.text).toMatchObject({ status: 'succeeded', version: 1, error: null });
    const failed = await call(owner, 'plugin_build', { name: 'broken', source: 'export function twice( {', wit, world: 'twice' });
    expect(failed.json).toMatchObject({ status: 'failed', error: expect.stringMatching(/^BUILD_FAILED/) });
  }, 240_000);
});
