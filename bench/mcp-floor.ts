import Fastify from 'fastify';
import { buildComponent } from '../test/helpers/components.ts';
import { CALC_WAT, CALC_WIT } from '../test/helpers/mcp.ts';
import { NEXT_REQUEST_US } from '../runtime/index.ts';
import { nodeSizedSandbox } from './node-sandbox.ts';

/**
 * The floor of the mcp-call bench: a bare fastify route that runs the plugin's `add` through the same lane and sandbox
 * a node uses (sized as a node sizes them) and answers with an SSE frame like the gateway's, and nothing else: no
 * session, no key, no MCP parsing beyond the arguments, no billing, no decision record; its loop polls for the next
 * request and for the sandbox's replies as a node's does (hot-loop.ts). Every server that runs tool
 * code off its event loop (the sandbox's per-call time and memory limits need that) pays at least this; when twice the
 * SDK server's calls/s is above this floor's, no gateway built that way reaches it on this machine.
 */
export async function startSandboxFloorServer(): Promise<{ origin: string; close(): Promise<void> }> {
  const sandbox = await nodeSizedSandbox('calc', await buildComponent({ wit: CALC_WIT, world: 'calc', wat: CALC_WAT }));

  const app = Fastify({ logger: false });
  app.post('/', async (req, reply) => {
    // As a node's edge does for every request (edge/server.ts).
    sandbox.hotLoop.expect(NEXT_REQUEST_US);
    const msg = req.body as { id?: number; params?: { arguments?: Record<string, unknown> } };
    const out = await sandbox.call('add', msg.params?.arguments ?? {});
    if (!out.ok) return reply.code(500).send({ error: out.message });
    const result = { content: [{ type: 'text', text: String(out.value) }], structuredContent: { value: out.value } };
    return reply.type('text/event-stream').send(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: msg.id, result })}\n\n`);
  });
  const origin = await app.listen({ port: 0, host: '127.0.0.1' });
  return {
    origin,
    close: async () => {
      await app.close();
      await sandbox.close();
    },
  };
}
