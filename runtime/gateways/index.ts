export * from './gateway-tokens.ts';
export * from './gateway-oauth.ts';
export * from './presentation.ts';
export { gatewayProjection } from './gateway-projection.ts';
export { createGatewayDirectory, viewOfRecord, DIRECTORY_TTL_MS, type GatewayDirectory } from './gateway-directory.ts';
