export { createAgentGateway, type AgentGateway, type AgentGatewayDeps, type SendHooks } from './agent-gateway.ts';
export { agentSteps, type AgentStepDeps } from './agent-steps.ts';
export { agentToolSource, agentToolName, delegatedCall, MAX_AGENT_TOOL_MESSAGE, type AgentToolDeps, type AgentCalls } from './agent-tool-source.ts';
export { agentTaskProjection, taskFromContext, taskKey, taskView } from './task-views.ts';
export { modelMessages, partsText, HISTORY_WINDOW } from './thread-history.ts';
export type * from './a2a-shapes.ts';
export { readAttachments, MAX_ATTACHMENT_BYTES, MAX_IMAGE_SIDE, type Attachment, type AttachmentDeps } from './attachments.ts';
export { isFrame, type RunEvent, type RunToolCall, type RunToolResult } from './run-tools.ts';
