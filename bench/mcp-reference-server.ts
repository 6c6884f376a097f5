// A reference of the mcp-call bench as its own process: `--kind sdk` (the official MCP SDK's Streamable HTTP server
// with the calc tool, mcp-reference.ts) or `--kind echo` (a bare fastify JSON echo: the ceiling of an HTTP round trip
// here). Prints one JSON line with its origin; stops on SIGTERM, SIGINT or the end of its standard input.
import { parseArgs } from 'node:util';
import { stopWhenTold } from './child.ts';
import { startEchoServer, startSdkServer } from './mcp-reference.ts';

const { values } = parseArgs({ options: { kind: { type: 'string' } } });
if (values.kind !== 'sdk' && values.kind !== 'echo') {
  process.stderr.write('usage: mcp-reference-server.ts --kind sdk|echo\n');
  process.exit(2);
}
const server = values.kind === 'sdk' ? await startSdkServer() : await startEchoServer();
stopWhenTold(() => server.close());
process.stdout.write(`${JSON.stringify({ origin: server.origin, kind: values.kind })}\n`);
