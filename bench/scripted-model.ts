// The model of the a2a-send bench as a process of its own: the platform's scripted model with the demo agent's rules
// (runtime/models/demo-rules.yaml), the OpenAI-compatible server a node serves on loopback. A model is a service of
// its own in any real deployment, so neither side under test serves it: our node reaches it as an operator provider
// (PLATFORM_MODEL_PROVIDERS), the SDK reference through the same AI SDK provider code. It prints one JSON line,
// {"baseUrl", "model"} (the model's name within the provider), and stops on SIGTERM, SIGINT or the end of its input.
import { readFile } from 'node:fs/promises';
import { DEMO_RULES_FILE, parseRules, serveScripted } from '../runtime/index.ts';
import { stopWhenTold } from './child.ts';

export interface ScriptedModelInfo {
  baseUrl: string;
  /** The rules' name: the model a provider reference names (`provider/<model>`). */
  model: string;
}

const rules = parseRules(await readFile(DEMO_RULES_FILE, 'utf8'));
const server = await serveScripted(rules);
const info: ScriptedModelInfo = { baseUrl: server.baseUrl, model: rules.name };
process.stdout.write(`${JSON.stringify(info)}\n`);
stopWhenTold(() => server.close());
