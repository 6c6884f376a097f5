/**
 * Ready-to-paste MCP client configuration for a gateway (`platform gateways show <handle> --client …`). The formats,
 * as their vendors document them:
 * - Claude Desktop, `claude_desktop_config.json`: `mcpServers` entries start local (stdio) servers, so a Streamable
 *   HTTP server is reached through `npx mcp-remote <url>`, which does the OAuth sign-in itself and sends extra headers
 *   given as `--header Name:${VAR}` with the value in `env` (spaces in `args` are mangled on Windows, hence no space
 *   after the colon); `--allow-http` for a plain-HTTP URL. https://github.com/geelen/mcp-remote#readme
 * - VS Code, `.vscode/mcp.json`: `servers` entries `{"type": "http", "url", "headers"}`; `${input:id}` asks for a
 *   value declared in `inputs` (`promptString`, `password: true` keeps it in secret storage).
 *   https://code.visualstudio.com/docs/copilot/reference/mcp-configuration
 * - Cursor, `~/.cursor/mcp.json` (or `.cursor/mcp.json` in a project): `mcpServers` entries `{"url", "headers"}`,
 *   with `${env:NAME}` read from the environment Cursor runs in. https://cursor.com/docs/mcp
 * Each does the OAuth sign-in itself where the gateway lets clients register (private-dcr). A key never goes into
 * the snippet: it holds a placeholder the user fills where the client keeps secrets.
 */

export const CLIENTS = ['claude', 'vscode', 'cursor'] as const;
export type McpClient = (typeof CLIENTS)[number];

/** What a client config needs of `gateway.show`. */
export interface GatewayView {
  handle: string;
  url: string;
  auth_mode: string;
  status: string;
}

export interface ClientConfig {
  gateway: string;
  url: string;
  client: McpClient;
  /** Where the snippet goes. */
  file: string;
  /** How the client authenticates: `oauth` (it signs in), `key` (an API key in a header), `none` (anonymous). */
  auth: 'oauth' | 'key' | 'none';
  config: Record<string, unknown>;
  notes: string[];
}

const FILES: Record<McpClient, string> = {
  claude: 'claude_desktop_config.json (macOS: ~/Library/Application Support/Claude/, Windows: %APPDATA%\\Claude\\; Settings > Developer > Edit Config), merged into "mcpServers"',
  vscode: '.vscode/mcp.json in the workspace (or MCP: Open User Configuration), merged into "servers" and "inputs"',
  cursor: '~/.cursor/mcp.json (or .cursor/mcp.json in a project), merged into "mcpServers"',
};

/** The environment variable a Cursor config reads the key from: one per gateway, so two gateways never share one. */
const envName = (handle: string) => `PLATFORM_MCP_KEY_${handle.toUpperCase().replaceAll('-', '_')}`;

export function clientConfig(client: McpClient, g: GatewayView): ClientConfig {
  // A private gateway registers no client by itself (only the operator does, `gateway client-create`): a client
  // reaches it with an API key. private-dcr clients register and sign in; public gateways admit anonymous callers.
  const auth = g.auth_mode === 'private-dcr' ? 'oauth' : g.auth_mode === 'private' ? 'key' : 'none';
  const key = auth === 'key';
  const bearer = 'Bearer <API key>';
  let config: Record<string, unknown>;
  const notes: string[] = [];
  if (client === 'claude') {
    const args = ['mcp-remote', g.url, ...(g.url.startsWith('http:') ? ['--allow-http'] : []), ...(key ? ['--header', 'Authorization:${AUTH_HEADER}'] : [])];
    config = { mcpServers: { [g.handle]: { command: 'npx', args, ...(key ? { env: { AUTH_HEADER: bearer } } : {}) } } };
    if (key) notes.push('Replace <API key> in env.AUTH_HEADER with the key; Claude Desktop starts mcp-remote, which sends it as the Authorization header.');
  } else if (client === 'vscode') {
    const input = `${g.handle}-api-key`;
    config = {
      servers: { [g.handle]: { type: 'http', url: g.url, ...(key ? { headers: { Authorization: `Bearer \${input:${input}}` } } : {}) } },
      ...(key ? { inputs: [{ type: 'promptString', id: input, description: `API key for the MCP gateway ${g.handle}`, password: true }] } : {}),
    };
    if (key) notes.push('VS Code asks for the key when it first starts the server and keeps it in its secret storage.');
  } else {
    config = { mcpServers: { [g.handle]: { url: g.url, ...(key ? { headers: { Authorization: `Bearer \${env:${envName(g.handle)}}` } } : {}) } } };
    if (key) notes.push(`Set ${envName(g.handle)} to the key in the environment Cursor starts from.`);
  }
  if (auth === 'oauth') notes.unshift('Auth: OAuth. On first connect the client registers itself with the gateway and opens a browser, where a user of the gateway\'s account signs in.');
  if (key)
    notes.unshift(
      'Auth: API key, sent as "Authorization: Bearer <API key>": a key of the gateway\'s account (platform admin key create --principal <id|name|email> --account <id|name> --name <name>). To sign in with OAuth instead, register the client with platform admin gateway client-create, or make the gateway private-dcr.',
    );
  if (auth === 'none') notes.unshift('Auth: none needed (a public gateway admits anonymous callers, who see only the tools open to anyone); to call as a principal, add the header "Authorization: Bearer <API key>".');
  if (g.status !== 'active') notes.push(g.status === 'retired' ? 'The gateway is retired: it serves nothing, for good.' : `The gateway is ${g.status}: it serves nothing until it is resumed.`);
  return { gateway: g.handle, url: g.url, client, file: FILES[client], auth, config, notes };
}
