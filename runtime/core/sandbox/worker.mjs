// What a sandbox thread (thread-entry.mjs) runs for each call. Plain JavaScript: worker threads do not go through the
// TypeScript loader.
// It instantiates a transpiled component once per (tenant, plugin, grants) and calls one export per task, with the
// imports of worker-grants.mjs: nothing is reachable that the version's permissions do not grant.
import { callExtension } from '@bytecodealliance/preview2-shim/io-worker';
import { GuestExit, call, compileFsPolicy, grantedImports } from './worker-grants.mjs';
import { EGRESS_GUARD_URL } from '../egress/index.mjs';

// Compiled artifacts by key: sent once per worker (the worker asks for them), not with every call.
const artifacts = new Map();
// Live instances, least recently used first: bounded in number and in the memory they hold.
const instances = new Map();
export const MAX_INSTANCES = 64;
export const MAX_INSTANCE_BYTES = 512 * 1024 * 1024;
// Memories one instance of a component may define: each is capped at the version's limit, and so is their sum.
export const MAX_MEMORIES = 4;
// A result travels to the node's main thread and out as JSON: a larger one is refused here, not turned into a
// string too long for the engine there.
export const MAX_RESULT_BYTES = 16 * 1024 * 1024;

/** Whether a value's JSON form could pass `limit` bytes (a walk that stops as soon as it knows). */
function tooLarge(value, limit) {
  let budget = limit;
  const stack = [value];
  while (stack.length) {
    const v = stack.pop();
    if (typeof v === 'string') budget -= v.length * 3 + 2;
    else if (v instanceof Uint8Array) budget -= Math.ceil(v.byteLength / 3) * 4 + 2;
    else if (Array.isArray(v)) {
      budget -= v.length + 2;
      for (const x of v) stack.push(x);
    } else if (v !== null && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        budget -= k.length + 4;
        stack.push(x);
      }
    } else budget -= 24;
    if (budget < 0) return true;
  }
  return false;
}
// What each grants key allows, with its filesystem rules compiled: sent once per worker, like the code.
const grantsByKey = new Map();
let egressMode = null;
const EMPTY = Buffer.alloc(0);

// HTTP requests are made in preview2-shim's IO worker; the guard installed there checks every address it connects to.
function configureEgress(allowPrivate) {
  if (egressMode === allowPrivate) return;
  callExtension(EGRESS_GUARD_URL, 'configure', [allowPrivate]);
  egressMode = allowPrivate;
}

async function instance(task, key) {
  const cached = instances.get(key);
  if (cached) {
    instances.delete(key);
    instances.set(key, cached);
    return cached;
  }
  const { glue, modules, memoriesOf, limitBytes } = artifacts.get(task.key);
  const provided = grantedImports(grantsByKey.get(task.grantsKey).grants);
  const imports = new Proxy(provided, {
    get(target, name) {
      if (typeof name === 'string' && !(name in target)) throw new Error(`the sandbox does not provide ${name}`);
      return target[name];
    },
  });
  // A memory one core instance defines may be exported again by another (jco's glue re-exports): counted once.
  const memories = new Set();
  let defined = 0;
  const core = (m, i) => {
    defined += memoriesOf.get(m) ?? 0;
    if (defined > MAX_MEMORIES) throw new Error(`the component instantiates more than ${MAX_MEMORIES} memories`);
    const created = new WebAssembly.Instance(m, i);
    for (const v of Object.values(created.exports)) if (v instanceof WebAssembly.Memory) memories.add(v);
    return created;
  };
  const entry = { inst: glue.instantiate((name) => modules[name], imports, core), memories, limitBytes };
  instances.set(key, entry);
  return entry;
}

const bytesOf = (entry) => {
  let n = 0;
  for (const m of entry.memories) n += m.buffer.byteLength;
  return n;
};

// After a call: an instance whose memories together passed the version's limit is dropped, then the least recently
// used ones go until the worker holds at most MAX_INSTANCES within MAX_INSTANCE_BYTES.
function settle(key) {
  const current = instances.get(key);
  let over = false;
  if (current && bytesOf(current) > current.limitBytes) {
    instances.delete(key);
    over = true;
  }
  let total = 0;
  for (const e of instances.values()) total += bytesOf(e);
  for (const [k, e] of instances) {
    if (instances.size <= MAX_INSTANCES && total <= MAX_INSTANCE_BYTES) break;
    if (k === key) continue;
    total -= bytesOf(e);
    instances.delete(k);
  }
  return over;
}

function output() {
  const o = call.out;
  if (!o || !o.written) return undefined;
  return { stdout: o.stdout.toString('utf8'), stderr: o.stderr.toString('utf8'), truncated: o.truncated };
}

export default async function invoke(task) {
  if (!artifacts.has(task.key) || !grantsByKey.has(task.grantsKey)) {
    if (!task.glue || !task.grants) return { missing: true };
    if (!artifacts.has(task.key)) {
      const glue = await import(`data:text/javascript;base64,${Buffer.from(task.glue).toString('base64')}`);
      const memoriesOf = new Map(Object.entries(task.modules).map(([name, m]) => [m, task.memories.perModule[name] ?? 0]));
      artifacts.set(task.key, { glue, modules: task.modules, memoriesOf, limitBytes: task.memories.limitBytes });
    }
    if (!grantsByKey.has(task.grantsKey)) grantsByKey.set(task.grantsKey, { grants: task.grants, fs: compileFsPolicy(task.grants.fs) });
  }
  // A version's compiled code is shared, its instances never are: state left in guest memory stays with its tenant.
  const key = `${task.tenant}\u0000${task.key}\u0000${task.grantsKey}`;
  const granted = grantsByKey.get(task.grantsKey);
  call.fs = granted.fs;
  call.hosts = granted.grants.hosts;
  call.allowPrivate = granted.grants.allowPrivate;
  call.bridge = task.bridge ?? null;
  call.out = { stdout: EMPTY, stderr: EMPTY, truncated: false, written: false };
  try {
    if (granted.grants.hosts.length) configureEgress(granted.grants.allowPrivate);
    let inst;
    try {
      inst = (await instance(task, key)).inst;
    } catch (err) {
      return { ok: false, kind: 'instantiate', message: String(err?.message ?? err) };
    }
    const target = task.iface ? inst[task.iface] : inst;
    const fn = target?.[task.func];
    if (typeof fn !== 'function') return { ok: false, kind: 'error', message: `export ${task.iface ? `${task.iface}#` : ''}${task.func} not found` };
    try {
      const value = await fn(...task.args);
      if (settle(key)) return { ok: false, kind: 'trap', message: 'the plugin used more memory than its limit, across its memories', output: output() };
      if (tooLarge(value, MAX_RESULT_BYTES)) return { ok: false, kind: 'error', message: `the result is larger than ${MAX_RESULT_BYTES / 1024 / 1024} MiB`, output: output() };
      return { ok: true, value, output: output() };
    } catch (err) {
      if (err && typeof err === 'object' && 'payload' in err) {
        settle(key);
        return { ok: false, kind: 'component-error', payload: err.payload, output: output() };
      }
      // A trap or an exit leaves the instance in an unknown state: it is never used again.
      instances.delete(key);
      return { ok: false, kind: err instanceof GuestExit ? 'exit' : 'trap', message: String(err?.message ?? err), output: output() };
    }
  } finally {
    call.bridge = null;
    call.out = null;
  }
}
