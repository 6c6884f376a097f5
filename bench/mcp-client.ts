import { Pool } from 'undici';

/**
 * A minimal Streamable HTTP client for load: one session per virtual client (initialize, the initialized
 * notification), then `tools/call` back to back. The same code drives our gateway and the reference server, so the
 * client's own cost is identical on both sides. The SSE response is read whole and its `data:` line parsed.
 */
export interface McpTarget {
  origin: string;
  /** Host header (our gateways are routed by Host; the reference ignores it). */
  host: string;
  path: string;
  headers?: Record<string, string>;
}

const ACCEPT = 'application/json, text/event-stream';
const VERSION = '2025-11-25';

export function mcpLoadClient(target: McpTarget, connections: number) {
  const pool = new Pool(target.origin, { connections, pipelining: 1 });
  let nextId = 1;

  async function post(body: unknown, session?: string): Promise<{ status: number; session?: string; message?: any }> {
    const headers: Record<string, string> = {
      host: target.host,
      accept: ACCEPT,
      'content-type': 'application/json',
      'mcp-protocol-version': VERSION,
      ...target.headers,
      ...(session ? { 'mcp-session-id': session } : {}),
    };
    const res = await pool.request({ method: 'POST', path: target.path, headers, body: JSON.stringify(body) });
    const text = await res.body.text();
    const sid = res.headers['mcp-session-id'];
    if (res.statusCode >= 400) throw new Error(`HTTP ${res.statusCode}: ${text.slice(0, 200)}`);
    const data = text
      .split('\n')
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(5).trim())
      .pop();
    const message = data ? JSON.parse(data) : text ? JSON.parse(text) : undefined;
    return { status: res.statusCode, ...(typeof sid === 'string' ? { session: sid } : {}), message };
  }

  return {
    async session(): Promise<string | undefined> {
      const init = await post({
        jsonrpc: '2.0',
        id: nextId++,
        method: 'initialize',
        params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: 'bench', version: '1.0.0' } },
      });
      if (init.message?.error) throw new Error(`initialize: ${JSON.stringify(init.message.error)}`);
      await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, init.session);
      return init.session;
    },
    async call(session: string | undefined, name: string, args: Record<string, unknown>, expectText: string): Promise<void> {
      const r = await post({ jsonrpc: '2.0', id: nextId++, method: 'tools/call', params: { name, arguments: args } }, session);
      const result = r.message?.result;
      if (!result || result.isError || result.content?.[0]?.text !== expectText) {
        throw new Error(`unexpected tools/call answer: ${JSON.stringify(r.message).slice(0, 200)}`);
      }
    },
    async echo(body: unknown): Promise<void> {
      const res = await pool.request({ method: 'POST', path: target.path, headers: { host: target.host, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      await res.body.text();
      if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode}`);
    },
    close: () => pool.close(),
  };
}
