import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

/** The reference's one tool: `calc_add` as a plain function. */
const calcAdd = (mcp: McpServer) =>
  mcp.registerTool('calc_add', { description: 'Adds two numbers', inputSchema: { a: z.number().int(), b: z.number().int() } }, async ({ a, b }) => ({
    content: [{ type: 'text', text: String(a + b) }],
    structuredContent: { value: a + b },
  }));

/**
 * The references of the mcp-call bench: the official MCP SDK's Streamable HTTP server serving the same `add` tool
 * as a plain function (sessions on, as a 2025-11-25 client expects), and a bare fastify JSON echo as the ceiling of
 * an HTTP round trip on this machine. The connector suites start it with tools of their own (`register`) and a
 * bearer `token` it requires (401 without it), as an upstream MCP server.
 */
export async function startSdkServer(opts: { register?: (mcp: McpServer) => void; token?: string } = {}): Promise<{ origin: string; close(): Promise<void> }> {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const server = http.createServer(async (req, res) => {
    if (opts.token !== undefined && req.headers.authorization !== `Bearer ${opts.token}`) return void res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"unauthorized"}');
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString()) : undefined;
    const sid = req.headers['mcp-session-id'];
    let transport = typeof sid === 'string' ? transports.get(sid) : undefined;
    if (!transport) {
      const t = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (id) => void transports.set(id, t) });
      const mcp = new McpServer({ name: 'reference', version: '1.0.0' });
      (opts.register ?? calcAdd)(mcp);
      await mcp.connect(t);
      transport = t;
    }
    await transport.handleRequest(req, res, body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: async () => {
      for (const t of transports.values()) await t.close();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

export async function startEchoServer(): Promise<{ origin: string; close(): Promise<void> }> {
  const app = Fastify({ logger: false });
  app.post('/', async (req) => req.body);
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  return { origin: address, close: () => app.close() };
}
