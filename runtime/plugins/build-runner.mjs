// One plugin build, in a process of its own (plugin-builds.ts starts it in an empty network namespace, with no
// environment of the node's, killed with its whole process group at its deadline or past its memory): componentize-js
// builds `<dir>/plugin.js` against `<dir>/wit` for the world named, and writes `<dir>/plugin.wasm`. What it prints is
// the build's log.
import { writeFileSync } from 'node:fs';
import path from 'node:path';

const [dir, worldName] = process.argv.slice(2);
try {
  // componentize-js reads its own files (the engine, the WIT) through preview2-shim, whose default is no preopens;
  // the tenant's code never runs here (it runs inside the engine, under wizer, which sees only the build directory).
  const { _setPreopens } = await import('@bytecodealliance/preview2-shim/filesystem');
  _setPreopens({ '/': '/' });
  const { componentize } = await import('@bytecodealliance/componentize-js');
  const { component } = await componentize({ sourcePath: path.join(dir, 'src', 'plugin.js'), witPath: path.join(dir, 'wit'), worldName });
  writeFileSync(path.join(dir, 'plugin.wasm'), component);
  process.stdout.write(`built ${component.byteLength} bytes\n`);
} catch (err) {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
}
