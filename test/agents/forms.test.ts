import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXTENSIONS } from '../../edge/a2a/card.ts';
import { rulesFile, send } from '../helpers/agents.ts';
import { a2aCall, bearer, request, sdkClient, sdkMessage, sdkText } from '../helpers/a2a.ts';
import { aguiAgent, aguiRun } from '../helpers/agui.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

const RULES = `name: demo
rules:
  - when: { after_tool: form_request }
    reply: "Booked: {{result}}"
  - when: { contains: book a table, tool: form_request }
    call:
      tool: form_request
      arguments:
        title: Table booking
        description: A table at the harbour restaurant.
        fields:
          type: object
          properties:
            name: { type: string, title: Your name }
            guests: { type: integer, minimum: 1, maximum: 12 }
            day: { type: string, format: date }
            seating: { type: string, enum: [inside, terrace], default: inside }
            vegetarian: { type: boolean }
          required: [name, guests]
  - when: { contains: bad form, tool: form_request }
    call: { tool: form_request, arguments: { title: Broken, fields: { type: object, properties: { x: { type: string, pattern: "^a+$" } } } } }
  - reply: "plain answer"
`;

const STATE = { INPUT_REQUIRED: 6, COMPLETED: 3 } as const;
const dataPart = (value: unknown) => ({ content: { $case: 'data', value } });

/** Forms (issue 15 §4): a task waits for a form's values, shown as A2UI where negotiated and as text otherwise. */
describe('the Forms built-in: a task waits for the user to fill in a form', () => {
  let p: TestPlatform;
  const key = () => p.node.demo!.serviceKey;

  beforeAll(async () => {
    p = await startTestPlatform({ env: { PLATFORM_SCRIPTED_RULES: await rulesFile(RULES) } });
    await p.node.services.admin.bindAgent({ agent: 'demo', capability: 'builtin-forms' });
  }, 60_000);
  afterAll(() => p?.close());

  it('[A2A-TASK-16] [A2A-EXT-05] [A2A-RPC-16] without A2UI the official client gets a text request; rejected values leave the task waiting, valid ones resume it', async () => {
    const client = await sdkClient(p, key());
    const asked = (await client.sendMessage(sdkMessage('please book a table for us'))) as any;
    expect(asked.status.state).toBe(STATE.INPUT_REQUIRED);
    const message = asked.status.message;
    // The form's data and A2UI parts are for clients that negotiated A2UI: this one gets the text alone, untagged.
    expect(message.parts).toHaveLength(1);
    expect(message.extensions ?? []).toEqual([]);
    const text = message.parts[0].content.value as string;
    expect(text).toContain('Table booking\nA table at the harbour restaurant.\n\nPlease fill in:\n- Your name (name; text; required)\n- guests (guests; a whole number, at least 1, at most 12; required)');
    expect(text).toContain('- seating (seating; one of: inside, terrace)');

    const at = { taskId: asked.id, contextId: asked.contextId };
    const wrong = (await client.sendMessage({ message: { messageId: randomUUID(), role: 1, ...at, parts: [dataPart({ 'platform.form_response': { values: { guests: 40, day: '2026-02-30', extra: 1 } } })] } } as never)) as any;
    expect(sdkText(wrong)).toBe('The form was not submitted: extra: the form has no such field; name: required; guests: must be at most 12; day: must be a day, YYYY-MM-DD.');
    expect(wrong.parts[1].content.value['platform.form_response_rejected'].problems).toHaveLength(4);
    expect(((await client.getTask({ tenant: '', id: asked.id } as never)) as any).status.state).toBe(STATE.INPUT_REQUIRED);
    // A text that is not one JSON object is no answer either.
    const prose = (await client.sendMessage({ message: { messageId: randomUUID(), role: 1, ...at, parts: [{ content: { $case: 'text', value: 'Ada, two people' } }] } } as never)) as any;
    expect(sdkText(prose)).toMatch(/^The form was not submitted: answer the form's fields as one JSON object/);
    // Text is read as JSON up to 64 KiB (parsed on the node's loop) and 16 levels: at the limit it is read (and its
    // extra field refused), past it the request is invalid params.
    const textAnswer = (value: string) => client.sendMessage({ message: { messageId: randomUUID(), role: 1, ...at, parts: [{ content: { $case: 'text', value } }] } } as never);
    const padded = (size: number) => { const base = '{"guests": 2, "note": ""}'; return base.replace('""', `"${'x'.repeat(size - base.length)}"`); };
    expect(sdkText(await textAnswer(padded(64 * 1024)))).toBe('The form was not submitted: note: the form has no such field; name: required.');
    await expect(textAnswer(padded(64 * 1024 + 1))).rejects.toThrow(/at most 65536 characters of JSON/);
    const nested = (n: number) => `{"name": "Ada", "guests": 2, "note": ${'['.repeat(n - 1)}${']'.repeat(n - 1)}}`;
    expect(sdkText(await textAnswer(nested(16)))).toBe('The form was not submitted: note: the form has no such field.');
    for (const n of [17, 5000]) await expect(textAnswer(nested(n)), String(n)).rejects.toThrow(/nests deeper than 16 levels/);

    const done = (await client.sendMessage({ message: { messageId: randomUUID(), role: 1, ...at, parts: [{ content: { $case: 'text', value: '{"name": "Ada", "guests": 2, "vegetarian": true}' } }] } } as never)) as any;
    expect(done.status.state).toBe(STATE.COMPLETED);
    expect(sdkText(done)).toBe('Booked: {"submitted":{"name":"Ada","guests":2,"vegetarian":true}}');
    // Answered, the form takes no second answer.
    const late = (await client.sendMessage({ message: { messageId: randomUUID(), role: 1, ...at, parts: [dataPart({ 'platform.form_response': { values: { name: 'Eve', guests: 1 } } })] } } as never)) as any;
    expect(sdkText(late)).toBe('The form was not submitted: this task is not waiting for a form.');
  });

  it('[A2A-EXT-06] [A2A-EXT-05] [A2A-EXT-01] with A2UI negotiated the form comes as tagged A2UI messages; an A2UI action of its submit button answers it', async () => {
    const headers = { ...bearer(key()), 'A2A-Extensions': EXTENSIONS.a2ui };
    const res = await send(p, 'book a table tonight', { configuration: { returnImmediately: false } });
    expect(res.status).toBe(200);
    const plainTask = res.json.result.task;
    // The same task read with A2UI negotiated.
    const read = await a2aCall(p, request('GetTask', { id: plainTask.id }), { headers });
    expect(read.headers['a2a-extensions']).toBe(EXTENSIONS.a2ui);
    const message = read.json.result.status.message;
    expect(message.extensions).toEqual([EXTENSIONS.a2ui]);
    const [text, form, surface, model, begin] = message.parts;
    expect(text.text).toMatch(/^Table booking/);
    const formId = form.data['platform.form'].form_id as string;
    expect(form.data['platform.form']).toMatchObject({ title: 'Table booking', schema: { type: 'object', required: ['name', 'guests'], additionalProperties: false } });
    expect([surface.mediaType, model.mediaType, begin.mediaType]).toEqual(['application/json+a2ui', 'application/json+a2ui', 'application/json+a2ui']);
    expect(begin.data).toEqual({ beginRendering: { surfaceId: `form-${formId}`, root: 'root' } });
    const components = new Map(surface.data.surfaceUpdate.components.map((c: any) => [c.id, c.component]));
    expect(components.get('field-name')).toEqual({ TextField: { label: { literalString: 'Your name' }, text: { path: '/values/name' }, textFieldType: 'shortText' } });
    expect(components.get('field-day')).toEqual({ DateTimeInput: { value: { path: '/values/day' }, enableDate: true, enableTime: false } });
    expect(components.get('field-vegetarian')).toEqual({ CheckBox: { label: { literalString: 'vegetarian' }, value: { path: '/values/vegetarian' } } });
    expect((components.get('submit') as any).Button.action.name).toBe('platform.form_response');
    expect(model.data).toEqual({ dataModelUpdate: { surfaceId: `form-${formId}`, contents: [{ key: 'values', valueMap: [{ key: 'seating', valueString: 'inside' }] }] } });

    // The renderer's action: a single choice as a list, a number typed as text; both taken in the form's types.
    const action = { userAction: { name: 'platform.form_response', surfaceId: `form-${formId}`, sourceComponentId: 'submit', timestamp: new Date().toISOString(), context: { form_id: formId, name: 'Bo', guests: '3', seating: ['terrace'] } } };
    const answered = await a2aCall(p, request('SendMessage', { message: { messageId: randomUUID(), role: 'ROLE_USER', taskId: plainTask.id, contextId: plainTask.contextId, parts: [{ data: action, mediaType: 'application/json' }] } }), { headers });
    expect(answered.json.result.task.status.state).toBe('TASK_STATE_COMPLETED');
    expect(answered.json.result.task.artifacts[0].parts[0].text).toBe('Booked: {"submitted":{"name":"Bo","guests":3,"seating":"terrace"}}');
  });

  it('a form the model asks for badly is a tool error it reads; a form answer for no task is invalid params', async () => {
    const bad = await send(p, 'a bad form please');
    expect(bad.json.result.task.status.state).toBe('TASK_STATE_COMPLETED');
    expect(bad.json.result.task.artifacts[0].parts[0].text).toBe('Booked: fields.properties.x: "pattern" is not supported in a form (use type, title, description, enum, items, minLength, maxLength, minimum, maximum, format, default, minItems, maxItems)');
    const orphan = await a2aCall(p, request('SendMessage', { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ data: { 'platform.form_response': { values: {} } } }] } }), { headers: bearer(key()) });
    expect(orphan.json.error).toMatchObject({ code: -32602 });
    expect(orphan.json.error.message).toMatch(/platform\.form_response needs both taskId and contextId/);
  });

  it('[A2A-RPC-03] over AG-UI the form is an interrupt with its schema; the next run resumes it with the values', async () => {
    const agent = aguiAgent(p, key());
    const first = await aguiRun(agent, 'book a table for four');
    expect(first.error).toBeNull();
    const finished = first.events.at(-1) as any;
    expect(finished.outcome.type).toBe('interrupt');
    const interrupt = finished.outcome.interrupts[0];
    expect(interrupt).toMatchObject({ reason: 'input_required', toolCallId: interrupt.id, responseSchema: { type: 'object', required: ['name', 'guests'] } });
    expect(interrupt.metadata['platform.form']).toMatchObject({ form_id: interrupt.id, title: 'Table booking' });
    expect(interrupt.metadata.a2ui).toHaveLength(3);
    expect(interrupt.message).toMatch(/^Table booking/);

    const refused = await aguiRun(agent, null, { resume: [{ interruptId: interrupt.id, status: 'resolved', payload: { values: { name: 'Cy' } } }] });
    expect(refused.error).toBeNull();
    const again = (refused.events.at(-1) as any).outcome;
    expect(again.type).toBe('interrupt');
    const resumed = await aguiRun(agent, null, { resume: [{ interruptId: interrupt.id, status: 'resolved', payload: { name: 'Cy', guests: 4 } }] });
    expect(resumed.error).toBeNull();
    const answer = resumed.events.filter((e) => e.type === 'TEXT_MESSAGE_CONTENT').map((e: any) => e.delta).join('');
    expect(answer).toBe('Booked: {"submitted":{"name":"Cy","guests":4}}');
    expect((resumed.events.at(-1) as any).outcome).toEqual({ type: 'success' });
  });

  it('[MCP-TOOLS-34] form rendering never reaches an MCP gateway: binding it there is refused', async () => {
    const gateway = (await p.node.services.store.gateways.byHandle('demo'))!;
    await expect(p.node.services.admin.bindGateway({ gateway: gateway.id, capability: 'builtin-forms' })).rejects.toMatchObject({ code: 'ADMIN_INVALID' });
  });
});
