export { connectorToolSource, connectorToolName } from './connector-tool-source.ts';
export { sealer, type Sealer } from './sealed-secrets.ts';
export { mcpUpstream, type McpUpstream, type UpstreamTool } from './mcp-upstream.ts';
export { apiKeyPlacement, operationsOf, readOpenApi, serverUrlOf, OPENAPI_LIMITS, type RestOperation } from './openapi-operations.ts';
export { callRestOperation, restRequest, type ConnectorSecret } from './rest-call.ts';
export { findRegistryServer, type RegistryServer } from './mcp-registry.ts';
