import { randomUUID } from 'node:crypto';
import type { Answer, Conversation } from './scripted-rules.ts';

/**
 * The OpenAI Chat Completions wire format the scripted model speaks (`POST /v1/chat/completions`): what it reads of a
 * request and the bodies and stream chunks it answers with, as every OpenAI-compatible client expects them.
 */
export interface ChatRequest {
  model?: unknown;
  messages?: unknown;
  tools?: unknown;
  stream?: unknown;
  stream_options?: { include_usage?: unknown };
}

type Msg = { role?: unknown; content?: unknown; tool_calls?: unknown; tool_call_id?: unknown; name?: unknown };

const textOf = (content: unknown): string =>
  typeof content === 'string'
    ? content
    : Array.isArray(content)
      ? content.map((p) => (p && typeof p === 'object' && (p as { type?: unknown }).type === 'text' ? String((p as { text?: unknown }).text ?? '') : '')).join('')
      : '';

/** Reads a request into what rules see; a malformed one is a message for a 400. */
export function conversationOf(body: ChatRequest): Conversation | string {
  if (!Array.isArray(body.messages) || body.messages.length === 0) return '`messages` must be a non-empty array';
  const messages = body.messages as Msg[];
  if (!messages.every((m) => m && typeof m === 'object' && typeof m.role === 'string')) return 'every message needs a `role`';
  if (body.tools !== undefined && !Array.isArray(body.tools)) return '`tools` must be an array';
  const tools = ((body.tools as { function?: { name?: unknown } }[] | undefined) ?? []).map((t) => String(t?.function?.name ?? '')).filter(Boolean);
  const lastUser = [...messages].reverse().find((m) => m.role === 'user');
  const last = messages[messages.length - 1]!;
  let toolResult: Conversation['toolResult'] = null;
  if (last.role === 'tool') {
    // The tool's name comes from the assistant message that asked for it, by the call's id.
    const call = messages
      .flatMap((m) => (m.role === 'assistant' && Array.isArray(m.tool_calls) ? (m.tool_calls as { id?: unknown; function?: { name?: unknown } }[]) : []))
      .find((c) => c.id === last.tool_call_id);
    toolResult = { tool: call?.function?.name ? String(call.function.name) : null, content: textOf(last.content) };
  }
  return { lastUser: lastUser ? textOf(lastUser.content) : '', toolResult, tools };
}

/** Tokens, approximately: whitespace-separated words (the scripted model has no tokenizer; documented as such). */
export const tokens = (text: string): number => (text.match(/\S+/g) ?? []).length;

export function usageOf(body: ChatRequest, completion: string) {
  const prompt = (body.messages as Msg[]).reduce((n, m) => n + tokens(textOf(m.content)), 0);
  const out = tokens(completion);
  return { prompt_tokens: prompt, completion_tokens: out, total_tokens: prompt + out };
}

export interface Completion {
  id: string;
  created: number;
  model: string;
}

export const completion = (model: string): Completion => ({ id: `chatcmpl-${randomUUID()}`, created: Math.floor(Date.now() / 1000), model });

const toolCall = (a: Extract<Answer, { kind: 'call' }>) => ({ id: `call_${randomUUID().replaceAll('-', '').slice(0, 24)}`, type: 'function' as const, function: { name: a.tool, arguments: JSON.stringify(a.arguments) } });

/** The whole answer as one `chat.completion` body. */
export function completionBody(c: Completion, body: ChatRequest, a: Answer) {
  const message = a.kind === 'reply' ? { role: 'assistant', content: a.text } : { role: 'assistant', content: null, tool_calls: [toolCall(a)] };
  const out = a.kind === 'reply' ? a.text : JSON.stringify(a.arguments);
  return { ...c, object: 'chat.completion', choices: [{ index: 0, message, finish_reason: a.kind === 'reply' ? 'stop' : 'tool_calls' }], usage: usageOf(body, out) };
}

/** The answer as `chat.completion.chunk` objects, in order (the caller frames them as SSE and ends with [DONE]). */
export function* completionChunks(c: Completion, body: ChatRequest, a: Answer): Generator<object> {
  const chunk = (delta: object, finish: string | null = null) => ({ ...c, object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] });
  yield chunk({ role: 'assistant', content: '' });
  if (a.kind === 'reply') {
    const words = a.text.split(/(?<=\s)/);
    for (let i = 0; i < words.length; i += a.chunk) yield chunk({ content: words.slice(i, i + a.chunk).join('') });
    yield chunk({}, 'stop');
  } else {
    const call = toolCall(a);
    yield chunk({ tool_calls: [{ index: 0, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } }] });
    yield chunk({ tool_calls: [{ index: 0, function: { arguments: call.function.arguments } }] });
    yield chunk({}, 'tool_calls');
  }
  if (body.stream_options?.include_usage === true) yield { ...c, object: 'chat.completion.chunk', choices: [], usage: usageOf(body, a.kind === 'reply' ? a.text : JSON.stringify(a.arguments)) };
}
