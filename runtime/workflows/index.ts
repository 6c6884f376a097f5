export { createWorkflows, workflowToolName, WORKFLOW_TOOL_WAIT_MS, type Workflows } from './workflows.ts';
export { createWorkflowRuns, workflowRunProjection, MAX_STEP_RESULT_BYTES, type WorkflowRuns } from './workflow-runs.ts';
export { parseWorkflow, checkWorkflow, checkInput, WORKFLOW_LIMITS, WORKFLOW_NAME } from './workflow-definition.ts';
