import Fastify from 'fastify';
import { compileArtifacts, createLaneScheduler, createSandbox, parsePluginConfig, reflectComponent, sandboxSizing } from '../runtime/index.ts';
import { buildComponent } from '../test/helpers/components.ts';
import { CALC_WAT, CALC_WIT } from '../test/helpers/mcp.ts';

/**
 * The floor of the mcp-call bench: a bare fastify route that runs the plugin's `add` through the same lane and sandbox
 * a node uses (sized as a node sizes them) and answers with an SSE frame like the gateway's, and nothing else: no
 * session, no key, no MCP parsing beyond the arguments, no billing, no decision record. Every server that runs tool
 * code off its event loop (the sandbox's per-call time and memory limits need that) pays at least this; when twice the
 * SDK server's calls/s is above this floor's, no gateway built that way reaches it on this machine.
 */
export async function startSandboxFloorServer(): Promise<{ origin: string; close(): Promise<void> }> {
  const wasm = await buildComponent({ wit: CALC_WIT, world: 'calc', wat: CALC_WAT });
  const signature = reflectComponent(wasm).functions.find((f) => f.name === 'add')!.type;
  const files = await compileArtifacts(wasm, parsePluginConfig('schema_version: "1.0"'));
  const sizing = sandboxSizing();
  const sandbox = createSandbox({ threads: sizing.threads });
  const lanes = createLaneScheduler({ slots: sizing.slots, perTenantInFlight: sizing.perTenantInFlight, queueCap: 1024 });
  const code = sandbox.load('calc', files);

  const app = Fastify({ logger: false });
  app.post('/', async (req, reply) => {
    const msg = req.body as { id?: number; params?: { arguments?: Record<string, unknown> } };
    const out = await lanes.run('tenant', () => sandbox.invoke(code, { tenant: 'tenant', export: 'add', signature, args: msg.params?.arguments ?? {}, timeoutMs: 5_000 }));
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
