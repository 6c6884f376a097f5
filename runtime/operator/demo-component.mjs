// Builds the demo plugin's component from its WebAssembly text and WIT (see demo-plugin.ts), then exits. A process of
// its own, started without the TypeScript loader: jco's wasm-tools is a large WebAssembly component, and whatever it
// used goes back to the system when the process exits instead of staying with the node for as long as it runs.
import { componentEmbed, componentNew, parse } from '@bytecodealliance/jco-transpile/wasm-tools';

// A parent that goes away leaves nothing running.
process.on('disconnect', () => process.exit(1));

process.once('message', async ({ wat, wit, world }) => {
  let reply;
  try {
    reply = { ok: true, wasm: await componentNew(await componentEmbed({ binary: await parse(wat), witSource: wit, world })) };
  } catch (err) {
    reply = { ok: false, message: err instanceof Error ? err.message : String(err) };
  }
  process.send(reply, () => process.exit(0));
});
