import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sdkClient } from '../helpers/a2a.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

const text = (value: string) => ({ content: { $case: 'text', value } });

/** What a newcomer gets from `npm start`: the demo agent answers offline, and calls the demo tools. */
describe('the demo agent right after start', () => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await startTestPlatform();
  });
  afterAll(() => p.close());

  it('[A2A-TASK-12] [A2A-TASK-13] answers with the scripted model and calls calc_add, through the official A2A client', async () => {
    const client = await sdkClient(p, p.node.demo!.serviceKey);
    const reply = (await client.sendMessage({ message: { messageId: `demo-1-${Date.now()}`, role: 1, parts: [text('echo hello, platform')] } } as never)) as any;
    expect(reply.parts[0].content.value).toBe('hello, platform');
    const task = (await client.sendMessage({ message: { messageId: `demo-2-${Date.now()}`, role: 1, parts: [text('add 2 and 40')] } } as never)) as any;
    expect(task.status.state).toBe(3);
    expect(task.artifacts[0].parts[0].content.value).toBe('The sum is 42.');
    const help = (await client.sendMessage({ message: { messageId: `demo-3-${Date.now()}`, role: 1, parts: [text('who are you?')] } } as never)) as any;
    expect(help.parts[0].content.value).toMatch(/scripted demo model, not a language model/);
  });
});
