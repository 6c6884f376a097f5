export { parseRules, answer, numbersOf, RulesError, type ScriptedRules, type Rule, type Conversation, type Answer } from './scripted-rules.ts';
export { scriptedApp, serveScripted, type ScriptedServer } from './scripted-server.ts';
export { languageModel, parseModelRef, type ModelEndpoint } from './provider.ts';
export { DEMO_RULES_FILE, DEMO_RULES_NAME } from './demo-rules.ts';
export { createModelRegistry, type ModelRegistry } from './model-registry.ts';
export { generateWhole, generateStreamed, type ModelTool, type ModelTurnRequest, type ModelSaid } from './model-call.ts';
export { modelFetch } from './model-fetch.ts';
