// A reference of the mcp-call bench as its own process: `--kind sdk` (the official MCP SDK's Streamable HTTP server
// with the calc tool, mcp-reference.ts), `--kind echo` (a bare fastify JSON echo: the ceiling of an HTTP round trip
// here) or `--kind floor` (a bare fastify route running the tool through a node's lane and sandbox, mcp-floor.ts).
// Prints one JSON line with its origin; stops on SIGTERM, SIGINT or the end of its standard input.
import { parseArgs } from 'node:util';
import { stopWhenTold } from './child.ts';
import { startEchoServer, startSdkServer } from './mcp-reference.ts';

// The floor loads the platform's runtime; the other references must not carry it (their start-up and heap).
const KINDS = {
  sdk: startSdkServer,
  echo: startEchoServer,
  floor: async () => (await import('./mcp-floor.ts')).startSandboxFloorServer(),
} as const;
const { values } = parseArgs({ options: { kind: { type: 'string' } } });
if (!values.kind || !Object.hasOwn(KINDS, values.kind)) {
  process.stderr.write('usage: mcp-reference-server.ts --kind sdk|echo|floor\n');
  process.exit(2);
}
const server = await KINDS[values.kind as keyof typeof KINDS]();
stopWhenTold(() => server.close());
process.stdout.write(`${JSON.stringify({ origin: server.origin, kind: values.kind })}\n`);
