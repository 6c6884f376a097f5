export { createMcpApp, type McpAppOptions } from './app.ts';
export { mcpSurface, MCP_SERVICES, type McpServices } from './surface.ts';
export { createMcpAdmission, challenge, protectedResourceMetadataUrl } from './admission.ts';
export { createMcpGuards } from './guards.ts';
export type * from './context.ts';
export { RPC, MCP_HTTP_ERRORS } from './errors.ts';
export * from './protocol.ts';
export { registerMcpOAuthRoutes, authorizationServerMetadata, protectedResourceMetadata } from './oauth-routes.ts';
