import { describe, expect, it } from 'vitest';
import { clientConfig } from '../../bin/cli/client-config.ts';

const gateway = (auth_mode: string, url = 'https://mcp-tools.example.com', status = 'active') => ({ handle: 'my-tools', url, auth_mode, status });

describe('MCP client configuration for a gateway (platform gateways show --client)', () => {
  it('an OAuth gateway (private-dcr): the URL alone, and the client signs in', () => {
    const claude = clientConfig('claude', gateway('private-dcr'));
    expect(claude).toMatchObject({ gateway: 'my-tools', url: 'https://mcp-tools.example.com', client: 'claude', auth: 'oauth' });
    expect(claude.config).toEqual({ mcpServers: { 'my-tools': { command: 'npx', args: ['mcp-remote', 'https://mcp-tools.example.com'] } } });
    expect(claude.file).toMatch(/^claude_desktop_config\.json /);
    expect(claude.notes).toEqual(["Auth: OAuth. On first connect the client registers itself with the gateway and opens a browser, where a user of the gateway's account signs in."]);
    expect(clientConfig('vscode', gateway('private-dcr')).config).toEqual({ servers: { 'my-tools': { type: 'http', url: 'https://mcp-tools.example.com' } } });
    expect(clientConfig('cursor', gateway('private-dcr')).config).toEqual({ mcpServers: { 'my-tools': { url: 'https://mcp-tools.example.com' } } });
  });

  it('a key gateway (private): the Authorization header with a placeholder, never a key', () => {
    const url = 'http://mcp-my-tools.localhost:8080';
    const claude = clientConfig('claude', gateway('private', url));
    expect(claude.auth).toBe('key');
    // Plain HTTP needs mcp-remote's --allow-http; the header has no space after the colon (Windows mangles spaces in args).
    expect(claude.config).toEqual({
      mcpServers: { 'my-tools': { command: 'npx', args: ['mcp-remote', url, '--allow-http', '--header', 'Authorization:${AUTH_HEADER}'], env: { AUTH_HEADER: 'Bearer <API key>' } } },
    });
    expect(clientConfig('vscode', gateway('private', url)).config).toEqual({
      servers: { 'my-tools': { type: 'http', url, headers: { Authorization: 'Bearer ${input:my-tools-api-key}' } } },
      inputs: [{ type: 'promptString', id: 'my-tools-api-key', description: 'API key for the MCP gateway my-tools', password: true }],
    });
    const cursor = clientConfig('cursor', gateway('private', url));
    expect(cursor.config).toEqual({ mcpServers: { 'my-tools': { url, headers: { Authorization: 'Bearer ${env:PLATFORM_MCP_KEY_MY_TOOLS}' } } } });
    expect(cursor.notes[0]).toMatch(/^Auth: API key, sent as "Authorization: Bearer <API key>": a key of the gateway's account \(platform admin key create /);
    expect(cursor.notes[1]).toBe('Set PLATFORM_MCP_KEY_MY_TOOLS to the key in the environment Cursor starts from.');
  });

  it('a public gateway needs no credential; a suspended or retired one is said to serve nothing', () => {
    const vscode = clientConfig('vscode', gateway('public', 'https://mcp-tools.example.com', 'suspended'));
    expect(vscode.auth).toBe('none');
    expect(vscode.config).toEqual({ servers: { 'my-tools': { type: 'http', url: 'https://mcp-tools.example.com' } } });
    expect(vscode.notes).toEqual([
      'Auth: none needed (a public gateway admits anonymous callers, who see only the tools open to anyone); to call as a principal, add the header "Authorization: Bearer <API key>".',
      'The gateway is suspended: it serves nothing until it is resumed.',
    ]);
    expect(clientConfig('cursor', gateway('public', 'https://x.example', 'retired')).notes.at(-1)).toBe('The gateway is retired: it serves nothing, for good.');
  });
});
