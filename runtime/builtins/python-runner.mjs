// One run_python call, in a process of its own that python-task.ts starts inside an empty network namespace and
// under Node's permission model (read access to the Pyodide package, this file and the snapshot only; no writes, no
// child processes, no workers). Pyodide's bridge to JavaScript cannot be closed from Python, so the process itself is
// the sandbox: whatever the code reaches in JavaScript, it finds no network, no files and nothing to start.
//
// `node python-runner.mjs snapshot <pyodide dir>`: loads a clean interpreter and writes its memory snapshot to stdout.
// `node python-runner.mjs run <pyodide dir> <output chars>`: restores the snapshot it reads from file descriptor 3,
// writes `ready`, reads the code as JSON from stdin, runs it, and writes one JSON line: {ok, result, stdout, truncated}.
import { constants, readFileSync } from 'node:fs';

const [mode, dir, outputChars] = process.argv.slice(2);
// Pyodide reads the file-open flags from process.binding, which the permission model denies: it gets those only.
process.binding = (name) => {
  if (name === 'constants') return { fs: constants };
  throw new Error('process.binding is not available');
};
const { loadPyodide } = await import(`${dir}/pyodide.mjs`);

if (mode === 'snapshot') {
  const py = await loadPyodide({ indexURL: `${dir}/`, _makeSnapshot: true });
  process.stdout.write(py.makeMemorySnapshot());
} else {
  const py = await loadPyodide({ indexURL: `${dir}/`, _loadSnapshot: readFileSync(3) });
  const cap = Number(outputChars);
  let out = '';
  let truncated = false;
  const emit = (s) => {
    if (truncated) return;
    if (out.length + s.length + 1 > cap) {
      out += s.slice(0, Math.max(0, cap - out.length));
      truncated = true;
    } else out += `${s}\n`;
  };
  py.setStdout({ batched: emit });
  py.setStderr({ batched: emit });
  process.stdout.write('ready\n');
  let input = '';
  for await (const chunk of process.stdin) input += chunk;
  const { code } = JSON.parse(input);
  let reply;
  try {
    const value = await py.runPythonAsync(code);
    let json = null;
    if (value !== undefined) {
      const plain = value?.toJs ? value.toJs({ dict_converter: Object.fromEntries, create_pyproxies: false }) : value;
      value?.destroy?.();
      try {
        json = JSON.stringify(plain) ?? null;
      } catch {
        json = JSON.stringify(String(plain));
      }
      if (json === null) json = JSON.stringify(String(plain));
    }
    if (json !== null && json.length > cap) {
      json = json.slice(0, cap);
      truncated = true;
    }
    reply = { ok: true, result: json, stdout: out, truncated };
  } catch (err) {
    // A Python exception: its last line (`ValueError: ...`), the traceback's end, what the code printed.
    const lines = String(err?.message ?? err).trim().split('\n');
    reply = { ok: false, result: lines.slice(-3).join('\n').slice(0, 4_000), stdout: out, truncated };
  }
  process.stdout.write(`${JSON.stringify(reply)}\n`);
}
