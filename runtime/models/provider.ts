import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { LanguageModelV3 } from '@ai-sdk/provider';

/** An OpenAI-compatible endpoint the operator configured (or the node's own scripted model on loopback). */
export interface ModelEndpoint {
  /** The provider's name: the part before `/` in an agent's `--model provider/model`. */
  provider: string;
  /** Base URL ending where `/chat/completions` is appended, e.g. `https://api.example.com/v1`. */
  baseUrl: string;
  apiKey?: string;
}

/**
 * The model seam: the AI SDK's language model over an OpenAI-compatible endpoint, streaming and with tool calls.
 * Real providers and the scripted model go through this same code; only the base URL differs. The platform passes
 * its own HTTP client (model-fetch.ts); without one the AI SDK uses WHATWG fetch, as an agent built on the SDK does.
 */
export function languageModel(endpoint: ModelEndpoint, model: string, fetchImpl?: typeof fetch): LanguageModelV3 {
  const provider = createOpenAICompatible({
    name: endpoint.provider,
    baseURL: endpoint.baseUrl,
    ...(endpoint.apiKey ? { apiKey: endpoint.apiKey } : {}),
    includeUsage: true,
    ...(fetchImpl ? { fetch: fetchImpl } : {}),
  });
  return provider.chatModel(model);
}

/** Splits `provider/model` (the model part may itself hold slashes, as many providers' ids do). */
export function parseModelRef(ref: string): { provider: string; model: string } | null {
  const at = ref.indexOf('/');
  if (at <= 0 || at === ref.length - 1) return null;
  return { provider: ref.slice(0, at), model: ref.slice(at + 1) };
}
