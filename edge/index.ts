export { startEdge, listen, type EdgeServer, type Listener } from './server.ts';
export { routeHost, type HostRoute } from './host-router.ts';
export { MGMT_ERRORS, CATEGORY_STATUS, MgmtError, readCredential, OPERATOR_TOKEN_HEADER, CLI_CLIENT_ID } from './management/index.ts';
