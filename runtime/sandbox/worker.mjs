// The sandbox worker (Piscina). Plain JavaScript: worker threads do not go through the TypeScript loader.
// It instantiates a transpiled component once per artifact set and calls one export per task. Imports are only
// what the platform grants: the allowed environment, a wasi:cli/exit that cannot end the worker, random and clocks.
import * as random from '@bytecodealliance/preview2-shim/random';
import * as clocks from '@bytecodealliance/preview2-shim/clocks';

const glueCache = new Map();
const instances = new Map();

class GuestExit extends Error {}

function importsFor(env) {
  return {
    'wasi:cli/environment': {
      getEnvironment: () => env,
      getArguments: () => [],
      initialCwd: () => undefined,
    },
    'wasi:cli/exit': {
      exit: (status) => {
        throw new GuestExit(`the plugin called exit (${status?.tag === 'err' ? 'error' : 'ok'})`);
      },
      exitWithCode: (code) => {
        throw new GuestExit(`the plugin called exit (${code})`);
      },
    },
    'wasi:random/random': random.random,
    'wasi:random/insecure': random.insecure,
    'wasi:random/insecure-seed': random.insecureSeed,
    'wasi:clocks/wall-clock': clocks.wallClock,
    'wasi:clocks/monotonic-clock': clocks.monotonicClock,
  };
}

async function instance(task) {
  const key = `${task.key}:${task.envKey}`;
  const cached = instances.get(key);
  if (cached) return cached;
  let glue = glueCache.get(task.key);
  if (!glue) {
    glue = await import(`data:text/javascript;base64,${Buffer.from(task.glue).toString('base64')}`);
    glueCache.set(task.key, glue);
  }
  const provided = importsFor(task.env);
  const imports = new Proxy(provided, {
    get(target, name) {
      if (typeof name === 'string' && !(name in target)) throw new Error(`the sandbox does not provide ${name}`);
      return target[name];
    },
  });
  const inst = glue.instantiate((name) => task.modules[name], imports, (m, i) => new WebAssembly.Instance(m, i));
  instances.set(key, inst);
  return inst;
}

export default async function invoke(task) {
  let inst;
  try {
    inst = await instance(task);
  } catch (err) {
    return { ok: false, kind: 'instantiate', message: String(err?.message ?? err) };
  }
  const target = task.iface ? inst[task.iface] : inst;
  const fn = target?.[task.func];
  if (typeof fn !== 'function') return { ok: false, kind: 'error', message: `export ${task.iface ? `${task.iface}#` : ''}${task.func} not found` };
  try {
    return { ok: true, value: fn(...task.args) };
  } catch (err) {
    if (err && typeof err === 'object' && 'payload' in err) return { ok: false, kind: 'component-error', payload: err.payload };
    // A trap or an exit leaves the instance in an unknown state: it is never used again.
    instances.delete(`${task.key}:${task.envKey}`);
    return { ok: false, kind: err instanceof GuestExit ? 'exit' : 'trap', message: String(err?.message ?? err) };
  }
}
