import { APICallError, type LanguageModelV3, type LanguageModelV3CallOptions, type LanguageModelV3Message, type LanguageModelV3StreamPart } from '@ai-sdk/provider';

/**
 * One model turn on the language model interface itself (`doGenerate` / `doStream` of the AI SDK's LanguageModelV3):
 * the agent loop is ours (AgentTask steps), so generateText's own step loop, its prompt standardization (a zod
 * validation of every message, recursive schemas and all, on the event loop at every turn) and its telemetry would
 * be paid for nothing — the prompt here is built by the platform from its own thread records, never from the wire.
 * What generateText gave that a turn needs is kept: one retry of a retryable provider failure, tool inputs parsed
 * from their JSON, an empty input read as `{}`.
 */

/** A tool as the model sees it. */
export interface ModelTool {
  name: string;
  description?: string;
  inputSchema: unknown;
}

export interface ModelTurnRequest {
  system?: string;
  /** The conversation without the system prompt: user, assistant and tool messages. */
  messages: LanguageModelV3Message[];
  tools: readonly ModelTool[];
  signal: AbortSignal;
}

export interface ModelSaid {
  text: string;
  calls: { id: string; name: string; args: unknown }[];
}

/** How long a retryable failure (429, 5xx, a dropped connection) waits before its one retry. */
const RETRY_DELAY_MS = 2000;

function options(r: ModelTurnRequest): LanguageModelV3CallOptions {
  return {
    prompt: r.system ? [{ role: 'system', content: r.system }, ...r.messages] : r.messages,
    ...(r.tools.length ? { tools: r.tools.map((t) => ({ type: 'function' as const, name: t.name, ...(t.description ? { description: t.description } : {}), inputSchema: t.inputSchema as never })) } : {}),
    abortSignal: r.signal,
  };
}

/** A tool call's input as the model wrote it: JSON, or (not JSON) the text itself, which the tool's schema then refuses. */
function inputOf(raw: string): unknown {
  if (raw.trim() === '') return {};
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

/** Runs `f`, and once more after a pause when it failed in a way the provider calls retryable. */
async function withRetry<T>(signal: AbortSignal, f: () => PromiseLike<T>): Promise<T> {
  try {
    return await f();
  } catch (err) {
    if (signal.aborted || !APICallError.isInstance(err) || !err.isRetryable) throw err;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      }, RETRY_DELAY_MS);
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
    });
    return await f();
  }
}

/** The turn asked whole: one answer, no stream to parse. */
export async function generateWhole(model: LanguageModelV3, r: ModelTurnRequest): Promise<ModelSaid> {
  const result = await withRetry(r.signal, () => model.doGenerate(options(r)));
  const said: ModelSaid = { text: '', calls: [] };
  for (const part of result.content) {
    if (part.type === 'text') said.text += part.text;
    else if (part.type === 'tool-call' && !part.providerExecuted) said.calls.push({ id: part.toolCallId, name: part.toolName, args: inputOf(part.input) });
  }
  return said;
}

/** The turn streamed: each piece of text goes to `onText` as it arrives; a failure inside the stream fails the turn. */
export async function generateStreamed(model: LanguageModelV3, r: ModelTurnRequest, onText: (text: string) => void): Promise<ModelSaid> {
  const { stream } = await withRetry(r.signal, () => model.doStream(options(r)));
  const said: ModelSaid = { text: '', calls: [] };
  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const part = value as LanguageModelV3StreamPart;
      if (part.type === 'text-delta') {
        said.text += part.delta;
        onText(part.delta);
      } else if (part.type === 'tool-call' && !part.providerExecuted) said.calls.push({ id: part.toolCallId, name: part.toolName, args: inputOf(part.input) });
      else if (part.type === 'error') throw part.error;
    }
  } finally {
    reader.releaseLock();
  }
  // A stream cut by the abort may end quietly: the text so far is not an answer.
  if (r.signal.aborted) throw r.signal.reason ?? new Error('aborted');
  return said;
}
