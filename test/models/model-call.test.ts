import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateStreamed, generateWhole, languageModel, modelFetch, parseRules, serveScripted, type ModelTurnRequest, type ScriptedServer } from '../../runtime/index.ts';

// A model turn on the language model's own interface (doGenerate / doStream), against the scripted model and against
// an OpenAI-compatible double on loopback that answers what a real provider may: a 503 before a good answer, a 400,
// tool arguments that are not JSON, a stream that breaks. Each through WHATWG fetch (what an agent built on the SDK uses)
// and through the platform's own model client (model-fetch.ts, what the node's model registry passes).

const RULES = `
name: test
rules:
  - when: { any: [add], numbers: 2, tool: calc_add }
    call: { tool: calc_add, arguments: { a: "{{number.1}}", b: "{{number.2}}" } }
  - when: { contains: story }
    reply: "one two three four five"
    chunk: 2
  - reply: "default answer"
`;
const CALC = { name: 'calc_add', description: 'Adds two integers.', inputSchema: { type: 'object', properties: { a: { type: 'integer' }, b: { type: 'integer' } }, required: ['a', 'b'] } };
const ask = (text: string, tools = [CALC]): ModelTurnRequest => ({ system: 'be brief', messages: [{ role: 'user', content: [{ type: 'text', text }] }], tools, signal: new AbortController().signal });

const platformClient = modelFetch();
afterAll(() => platformClient.close());

describe.each([
  ['WHATWG fetch', undefined],
  ["the platform's model client", platformClient],
])('a model turn on the language model interface, through %s', (_, client) => {
  let scripted: ScriptedServer;
  let double: http.Server;
  let base = '';
  /** What the double answers next, per request, in order; every request it saw. */
  let script: ((res: http.ServerResponse) => void)[] = [];
  const seen: { body: any }[] = [];

  beforeAll(async () => {
    scripted = await serveScripted(parseRules(RULES));
    double = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        seen.push({ body: JSON.parse(body) });
        const next = script.shift();
        if (next) next(res);
        else res.writeHead(500).end('no answer scripted');
      });
    });
    await new Promise<void>((r) => double.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(double.address() as AddressInfo).port}/v1`;
  });
  afterAll(async () => {
    await scripted.close();
    await new Promise((r) => double.close(r));
  });

  const json = (status: number, body: unknown) => (res: http.ServerResponse) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  const completion = (message: object, finish = 'stop') => ({ id: 'c1', object: 'chat.completion', created: 0, model: 'm', choices: [{ index: 0, message, finish_reason: finish }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } });
  const toolCall = (args: string) => completion({ role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'calc_add', arguments: args } }] }, 'tool_calls');
  const doubleModel = () => languageModel({ provider: 'double', baseUrl: base }, 'm', client);

  it('answers whole: a reply, and a tool call whose arguments arrive parsed; the system prompt and the tools reach the wire', async () => {
    const model = languageModel({ provider: 'scripted', baseUrl: scripted.baseUrl }, 'test', client);
    expect(await generateWhole(model, ask('hello'))).toEqual({ text: 'default answer', calls: [] });
    const said = await generateWhole(model, ask('add 2 and 40'));
    expect(said.text).toBe('');
    expect(said.calls).toEqual([{ id: expect.stringMatching(/^call_/), name: 'calc_add', args: { a: 2, b: 40 } }]);

    script = [json(200, completion({ role: 'assistant', content: 'hi' }))];
    seen.length = 0;
    await generateWhole(doubleModel(), ask('hello'));
    expect(seen[0]!.body.messages).toEqual([
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'hello' },
    ]);
    expect(seen[0]!.body.tools).toEqual([{ type: 'function', function: { name: 'calc_add', description: 'Adds two integers.', parameters: CALC.inputSchema } }]);
  });

  it('streams: each piece of text to onText as it arrives, the whole text at the end', async () => {
    const model = languageModel({ provider: 'scripted', baseUrl: scripted.baseUrl }, 'test', client);
    const pieces: string[] = [];
    const said = await generateStreamed(model, ask('tell a story'), (t) => pieces.push(t));
    expect(said).toEqual({ text: 'one two three four five', calls: [] });
    expect(pieces.length).toBeGreaterThan(1);
    expect(pieces.join('')).toBe('one two three four five');
  });

  it('retries a retryable failure (503) once, after a pause, and not a refusal (400)', async () => {
    script = [json(503, { error: { message: 'overloaded', type: 'server_error' } }), json(200, completion({ role: 'assistant', content: 'second time' }))];
    seen.length = 0;
    const t0 = Date.now();
    expect(await generateWhole(doubleModel(), ask('hello'))).toEqual({ text: 'second time', calls: [] });
    expect(seen).toHaveLength(2);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1900);

    script = [json(400, { error: { message: 'bad request: no such model', type: 'invalid_request_error' } }), json(200, completion({ role: 'assistant', content: 'never' }))];
    seen.length = 0;
    await expect(generateWhole(doubleModel(), ask('hello'))).rejects.toThrow(/no such model/);
    expect(seen).toHaveLength(1);
    script = [];
  });

  it('an abort during the pause before the retry ends the turn with the abort, without the retry', async () => {
    script = [json(503, { error: { message: 'overloaded', type: 'server_error' } })];
    seen.length = 0;
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('canceled by the test')), 200);
    await expect(generateWhole(doubleModel(), { ...ask('hello'), signal: controller.signal })).rejects.toThrow('canceled by the test');
    expect(seen).toHaveLength(1);
  });

  it('tool arguments: empty means {}, text that is not JSON is handed on as text (the tool refuses it)', async () => {
    script = [json(200, toolCall('')), json(200, toolCall('{"a": 1, "b":'))];
    expect((await generateWhole(doubleModel(), ask('x'))).calls).toEqual([{ id: 'call_1', name: 'calc_add', args: {} }]);
    expect((await generateWhole(doubleModel(), ask('x'))).calls).toEqual([{ id: 'call_1', name: 'calc_add', args: '{"a": 1, "b":' }]);
  });

  it('a stream that breaks with an error event fails the turn', async () => {
    script = [
      (res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(`data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [{ index: 0, delta: { role: 'assistant', content: 'par' }, finish_reason: null }] })}\n\n`);
        res.end(`data: ${JSON.stringify({ error: { message: 'the provider fell over', type: 'server_error', code: null } })}\n\n`);
      },
    ];
    const pieces: string[] = [];
    await expect(generateStreamed(doubleModel(), ask('x'), (t) => pieces.push(t))).rejects.toThrow(/fell over/);
    expect(pieces).toEqual(['par']);
  });
});
