import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { generateText, jsonSchema, stepCountIs, streamText, tool } from 'ai';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_RULES_FILE, DEMO_RULES_NAME, languageModel, parseModelRef, parseRules, RulesError, serveScripted, type ScriptedServer } from '../../runtime/index.ts';

const RULES = `
name: test
rules:
  - when: { after_tool: calc_add }
    reply: "The sum is {{result}}."
  - when: { any: [add, plus], numbers: 2, tool: calc_add }
    call: { tool: calc_add, arguments: { a: "{{number.1}}", b: "{{number.2}}", note: "from {{text}}" } }
  - when: { contains: story }
    reply: "one two three four five"
    repeat: 2
    chunk: 2
  - when: { contains: [echo] }
    reply: "{{after:echo}}"
  - reply: "default answer"
`;

describe('the scripted model', () => {
  let server: ScriptedServer;
  const model = () => languageModel({ provider: 'scripted', baseUrl: server.baseUrl }, 'test');
  const calc = () =>
    tool({
      description: 'Adds two integers.',
      inputSchema: jsonSchema<{ a: number; b: number; note?: string }>({ type: 'object', properties: { a: { type: 'integer' }, b: { type: 'integer' }, note: { type: 'string' } }, required: ['a', 'b'] }),
      execute: async ({ a, b }) => a + b,
    });

  beforeAll(async () => {
    server = await serveScripted(parseRules(RULES));
  });
  afterAll(() => server.close());

  it('answers the AI SDK through the OpenAI-compatible provider: a plain reply, with usage', async () => {
    const r = await generateText({ model: model(), prompt: 'hello there' });
    expect(r.text).toBe('default answer');
    expect(r.finishReason).toBe('stop');
    expect(r.usage.inputTokens).toBe(2);
    expect(r.usage.outputTokens).toBe(2);
  });

  it('calls an offered tool with arguments taken from the message, then answers from its result', async () => {
    const r = await generateText({ model: model(), prompt: 'please add 2 and 40', tools: { calc_add: calc() }, stopWhen: stepCountIs(5) });
    expect(r.steps).toHaveLength(2);
    const call = r.steps[0]!.toolCalls[0]!;
    expect(call.toolName).toBe('calc_add');
    // A template that is one number placeholder stays a number; others are text.
    expect(call.input).toEqual({ a: 2, b: 40, note: 'from please add 2 and 40' });
    expect(r.steps[0]!.finishReason).toBe('tool-calls');
    expect(r.text).toBe('The sum is 42.');
  });

  it('does not call a tool the request does not offer', async () => {
    const r = await generateText({ model: model(), prompt: 'please add 2 and 40' });
    expect(r.text).toBe('default answer');
  });

  it('streams a long answer in chunks, and tool calls as deltas', async () => {
    const s = streamText({ model: model(), prompt: 'tell me a story' });
    const parts: string[] = [];
    for await (const p of s.textStream) parts.push(p);
    expect(parts.join('')).toBe('one two three four five one two three four five');
    expect(parts).toHaveLength(5);
    expect(parts[0]).toBe('one two ');
    const t = streamText({ model: model(), prompt: 'add 1 plus 1', tools: { calc_add: calc() }, stopWhen: stepCountIs(3) });
    expect(await t.text).toBe('The sum is 2.');
    expect((await t.steps)[0]!.toolCalls[0]!.input).toMatchObject({ a: 1, b: 1 });
  });

  it('speaks the wire format: chat.completion bodies, SSE chunks ending in [DONE], usage chunks, OpenAI errors', async () => {
    const post = async (body: unknown) => {
      const res = await request(`${server.baseUrl}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return { status: res.statusCode, type: String(res.headers['content-type']), text: await res.body.text() };
    };
    const plain = await post({ model: 'test', messages: [{ role: 'user', content: [{ type: 'text', text: 'echo  hi there' }] }] });
    expect(plain.status).toBe(200);
    const body = JSON.parse(plain.text);
    expect(body).toMatchObject({ object: 'chat.completion', model: 'test', choices: [{ index: 0, message: { role: 'assistant', content: 'hi there' }, finish_reason: 'stop' }], usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } });
    expect(body.id).toMatch(/^chatcmpl-/);
    const streamed = await post({ model: 'test', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'x' }] });
    expect(streamed.type).toMatch(/^text\/event-stream/);
    const frames = streamed.text.trim().split('\n\n').map((f) => f.replace(/^data: /, ''));
    expect(frames.at(-1)).toBe('[DONE]');
    const chunks = frames.slice(0, -1).map((f) => JSON.parse(f));
    expect(chunks.every((c) => c.object === 'chat.completion.chunk')).toBe(true);
    expect(chunks.at(-1).usage).toEqual({ prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 });
    expect(chunks.at(-2).choices[0].finish_reason).toBe('stop');
    for (const bad of [{}, { messages: [] }, { messages: [{ content: 'no role' }] }, { messages: [{ role: 'user', content: 'x' }], tools: 'x' }]) {
      const r = await post(bad);
      expect(r.status).toBe(400);
      expect(JSON.parse(r.text).error.type).toBe('invalid_request_error');
    }
    const models = await request(`${server.baseUrl}/models`);
    expect(await models.body.json()).toEqual({ object: 'list', data: [{ id: 'scripted/test', object: 'model', created: 0, owned_by: 'platform-scripted' }] });
  });

  it('matches in one pass: a message of a million characters is answered at once', async () => {
    const t = performance.now();
    const r = await generateText({ model: model(), prompt: `${'add '.repeat(250_000)}1 2` });
    expect(r.text).toBe('default answer');
    expect(performance.now() - t).toBeLessThan(2_000);
  });

  it('refuses bad rules with every problem and its path', () => {
    expect(() => parseRules('rules: []')).toThrow(RulesError);
    expect(() => parseRules('rules:\n  - reply: x\n    call: { tool: t }')).toThrow(/exactly one of `reply` and `call`/);
    expect(() => parseRules('rules:\n  - when: { numbers: 0 }\n    reply: x\n  - when: { nope: 1 }\n    reply: y')).toThrow(/\/rules\/0\/when\/numbers.*\/rules\/1\/when: must NOT have additional properties/s);
    expect(() => parseRules('rules: [')).toThrow(/not valid YAML/);
    expect(parseRules('rules:\n  - reply: x').name).toBe('scripted');
  });

  it('ships the demo rules, and splits provider/model references', () => {
    const demo = parseRules(readFileSync(DEMO_RULES_FILE, 'utf8'));
    // The node serves scripted/demo before it reads the file (on the first request): the two names must agree.
    expect(demo.name).toBe(DEMO_RULES_NAME);
    expect(DEMO_RULES_NAME).toBe('demo');
    expect(parseModelRef('scripted/demo')).toEqual({ provider: 'scripted', model: 'demo' });
    expect(parseModelRef('openrouter/meta-llama/llama-3')).toEqual({ provider: 'openrouter', model: 'meta-llama/llama-3' });
    expect(parseModelRef('nomodel')).toBeNull();
    expect(parseModelRef('/x')).toBeNull();
  });

  it('reads rules given as a loader on the first request, once, and answers as their name before that', async () => {
    let loads = 0;
    const lazy = await serveScripted({
      name: 'later',
      load: async () => {
        loads++;
        return parseRules(RULES);
      },
    });
    try {
      const models = (await (await fetch(`${lazy.baseUrl}/models`)).json()) as { data: { id: string }[] };
      expect(models.data.map((m) => m.id)).toEqual(['scripted/later']);
      expect(loads).toBe(0);
      const m = languageModel({ provider: 'scripted', baseUrl: lazy.baseUrl }, 'later');
      const [a, b] = await Promise.all([generateText({ model: m, prompt: 'hello' }), generateText({ model: m, prompt: 'hello' })]);
      expect(a.text).toBe(b.text);
      expect(a.text.length).toBeGreaterThan(0);
      expect(loads).toBe(1);
    } finally {
      await lazy.close();
    }
  });

  it('is served on its own by `platform model serve`, until SIGTERM', async () => {
    const main = path.resolve(import.meta.dirname, '../../bin/main.ts');
    const child = spawn(process.execPath, ['--import', 'tsx', main, 'model', 'serve', '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /at (http:\/\/\S+\/v1)/.exec(out);
        if (m) resolve(m[1]!);
      });
      child.once('close', (code) => reject(new Error(`exited ${code}: ${out}`)));
    });
    const r = await generateText({ model: languageModel({ provider: 'scripted', baseUrl: url }, 'demo'), prompt: 'echo offline works' });
    expect(r.text).toBe('offline works');
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  }, 30_000);
});
