import { readFile } from 'node:fs/promises';
import type { LanguageModelV3 } from '@ai-sdk/provider';
import type { PlatformConfig } from '../core/config/index.ts';
import { PlatformError } from '../core/errors/index.ts';
import { DEMO_RULES_FILE, DEMO_RULES_NAME } from './demo-rules.ts';
import { modelFetch } from './model-fetch.ts';
import { languageModel, parseModelRef, type ModelEndpoint } from './provider.ts';
import { parseRules, RulesError } from './scripted-rules.ts';
import { serveScripted, type RulesSource, type ScriptedServer } from './scripted-server.ts';

/** The models agents can use: the operator's providers and the node's scripted model. */
export interface ModelRegistry {
  /** The language model a `provider/model` reference names; MODEL_UNKNOWN when no configured provider has it. */
  resolve(ref: string): LanguageModelV3;
  /** Throws MODEL_UNKNOWN unless `ref` names a configured provider (and, for `scripted`, the served rules). */
  check(ref: string): void;
  /** The configured providers, for listings (no keys). */
  providers(): { name: string; baseUrl: string }[];
  close(): Promise<void>;
}

/**
 * Starts the scripted model on loopback (it costs one idle socket) and indexes the configured providers. Every
 * model, the scripted one included, is reached through the same OpenAI-compatible provider code.
 */
export async function createModelRegistry(config: Pick<PlatformConfig, 'modelProviders' | 'scriptedRules'>): Promise<ModelRegistry> {
  const read = async (file: string) => {
    try {
      return parseRules(await readFile(file, 'utf8'));
    } catch (err) {
      const why = err instanceof RulesError ? err.message : `cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`;
      throw new PlatformError('MODEL_UNKNOWN', `PLATFORM_SCRIPTED_RULES=${file}: ${why}`);
    }
  };
  // The operator's rules are read now, so a mistake in them stops the start; the platform's own on first use.
  const rules: RulesSource = config.scriptedRules ? await read(config.scriptedRules) : { name: DEMO_RULES_NAME, load: () => read(DEMO_RULES_FILE) };
  const scripted: ScriptedServer = await serveScripted(rules);
  const endpoints = new Map<string, ModelEndpoint>([['scripted', { provider: 'scripted', baseUrl: scripted.baseUrl }]]);
  for (const p of config.modelProviders) endpoints.set(p.name, { provider: p.name, baseUrl: p.baseUrl, ...(p.apiKey ? { apiKey: p.apiKey } : {}) });

  const built = new Map<string, LanguageModelV3>();
  // One HTTP client for every model call of the node (model-fetch.ts).
  const http = modelFetch();
  const check = (ref: string) => {
    const r = parseModelRef(ref);
    const known = [...endpoints.keys()].join(', ');
    if (!r) throw new PlatformError('MODEL_UNKNOWN', `model ${JSON.stringify(ref)}: name it as provider/model (providers: ${known})`);
    if (!endpoints.has(r.provider)) throw new PlatformError('MODEL_UNKNOWN', `model ${JSON.stringify(ref)}: no provider ${JSON.stringify(r.provider)} is configured (providers: ${known}; see PLATFORM_MODEL_PROVIDERS)`);
    if (r.provider === 'scripted' && r.model !== rules.name) throw new PlatformError('MODEL_UNKNOWN', `model ${JSON.stringify(ref)}: the scripted model serves the rules named ${JSON.stringify(rules.name)} (scripted/${rules.name})`);
    return r;
  };
  return {
    check: (ref) => void check(ref),
    resolve(ref) {
      // Building a provider's model builds its schemas: once per reference, not once per turn.
      let model = built.get(ref);
      if (!model) {
        const r = check(ref);
        model = languageModel(endpoints.get(r.provider)!, r.model, http);
        built.set(ref, model);
      }
      return model;
    },
    providers: () => [...endpoints.values()].map((e) => ({ name: e.provider, baseUrl: e.baseUrl })),
    async close() {
      await scripted.close();
      await http.close();
    },
  };
}
