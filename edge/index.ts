export { startEdge, listen, type EdgeServer, type Listener, type ConnectionLimits } from './server.ts';
export { readTlsCredentials, type TlsCredentials } from './tls-credentials.ts';
export { routeHost, type HostRoute } from './http/index.ts';
export { CATEGORY_STATUS, managementError, readCredential, OPERATOR_TOKEN_HEADER, CLI_CLIENT_ID } from './management/index.ts';
export type { A2aBackend, A2aCallContext } from './a2a/index.ts';
