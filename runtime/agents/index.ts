export { createAgentGateway, type AgentGateway, type AgentGatewayDeps } from './agent-gateway.ts';
export { agentSteps, type AgentStepDeps } from './agent-steps.ts';
export { agentTaskProjection, taskKey, taskView } from './task-views.ts';
export { modelMessages, partsText, HISTORY_WINDOW } from './thread-history.ts';
export type * from './a2a-shapes.ts';
