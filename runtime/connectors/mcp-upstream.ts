import type { Client } from '@modelcontextprotocol/client';
import { egressStreamingFetch, type EgressOptions } from '../core/egress/index.ts';
import { PlatformError } from '../core/errors/index.ts';
import type { JsonSchema } from '../tools/index.ts';

export interface UpstreamTool {
  name: string;
  description: string;
  inputSchema: JsonSchema;
  readOnly: boolean;
}

export interface UpstreamCall {
  isError: boolean;
  /** The text of the result's text content, joined; the structured content when there is some. */
  text: string;
  structured?: unknown;
}

/** How long one upstream request may take (a tools/call of a slow upstream included). */
const UPSTREAM_TIMEOUT_MS = 60_000;
/** Pages of tools/list read at most (an upstream that pages forever is cut off). */
const MAX_PAGES = 20;

/**
 * A session with a custom MCP server (Streamable HTTP), opened on first use and reopened after a failure: the
 * platform is its client, with the connector's credentials as headers, every request through egress.
 */
export function mcpUpstream(url: string, headers: Record<string, string>, egress: Pick<EgressOptions, 'allowLoopback' | 'ca' | 'resolve'>) {
  let session: Promise<Client> | null = null;
  const connect = async () => {
    // Loaded with the first connection, not with the node: most nodes never open one, and the SDK (with its schema
    // libraries) took about a quarter of a second of every start.
    const { Client, StreamableHTTPClientTransport } = await import('@modelcontextprotocol/client');
    const client = new Client({ name: 'agent-platform-connector', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(url), { fetch: egressStreamingFetch(egress), requestInit: { headers } });
    await client.connect(transport);
    return client;
  };
  async function withSession<T>(fn: (c: Client) => Promise<T>): Promise<T> {
    session ??= connect();
    let client: Client;
    try {
      client = await session;
    } catch (err) {
      session = null;
      throw new PlatformError('CONNECTOR_UNAVAILABLE', `the MCP server of this connector could not be reached: ${(err as Error).message}`);
    }
    try {
      return await fn(client);
    } catch (err) {
      // A lost session (the upstream restarted, or expired it) is reopened on the next request.
      session = null;
      void client.close().catch(() => {});
      throw err;
    }
  }
  return {
    async tools(): Promise<UpstreamTool[]> {
      return withSession(async (c) => {
        const out: UpstreamTool[] = [];
        let cursor: string | undefined;
        for (let page = 0; page < MAX_PAGES; page++) {
          const r = await c.listTools(cursor ? { cursor } : {}, { timeout: UPSTREAM_TIMEOUT_MS });
          for (const t of r.tools) {
            out.push({ name: t.name, description: t.description ?? '', inputSchema: t.inputSchema as JsonSchema, readOnly: t.annotations?.readOnlyHint === true });
          }
          cursor = r.nextCursor;
          if (!cursor) break;
        }
        return out;
      });
    },
    async call(name: string, args: unknown, signal?: AbortSignal): Promise<UpstreamCall> {
      return withSession(async (c) => {
        const r = await c.callTool({ name, arguments: (args ?? {}) as Record<string, unknown> }, { timeout: UPSTREAM_TIMEOUT_MS, ...(signal ? { signal } : {}) });
        const content = (r.content ?? []) as { type: string; text?: string }[];
        const text = content.filter((x) => x.type === 'text').map((x) => x.text ?? '').join('\n');
        return { isError: r.isError === true, text, ...(r.structuredContent !== undefined ? { structured: r.structuredContent } : {}) };
      });
    },
    close: async () => {
      const s = session;
      session = null;
      if (s) await (await s.catch(() => null))?.close().catch(() => {});
    },
  };
}

export type McpUpstream = ReturnType<typeof mcpUpstream>;
