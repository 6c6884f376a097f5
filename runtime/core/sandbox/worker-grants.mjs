// What a plugin instance may reach, as WASI imports. Deny by default: every interface below is either granted from
// the version's permissions or answers "denied". Instances are built once per (tenant, plugin, grants); what varies
// per call (the filesystem and network policy, the key-value bridge, the output buffers) lives in `call`, which the
// worker sets before each call (a worker runs one call at a time).
import { receiveMessageOnPort } from 'node:worker_threads';
import { WASIShim } from '@bytecodealliance/preview2-shim/instantiation';
import * as httpShim from '@bytecodealliance/preview2-shim/http';
import { streams } from '@bytecodealliance/preview2-shim/io';
import { createSockets } from '@bytecodealliance/preview2-shim/sockets';
import { isForbiddenAddress, isForbiddenName } from '../egress/index.mjs';
import { compileGlob } from './fs-glob.mjs';

export class GuestExit extends Error {}

/** The current call's policy and buffers. */
export const call = { fs: [], hosts: [], allowPrivate: false, bridge: null, out: null };

export const OUTPUT_CAP_BYTES = 64 * 1024;
/** Zeroes one write-zeroes may ask for (the shim allocates them before anything looks at the size). */
export const MAX_ZEROES = 1024 * 1024;

// write-zeroes as an ordinary write of a bounded buffer: stdout and stderr then go through the capture below, and a
// guest asking for four gigabytes of zeroes gets a closed stream instead of the allocation.
const OutputStream = streams.OutputStream.prototype;
const zeroes = (len) => {
  if (len > BigInt(MAX_ZEROES)) throw { tag: 'closed' };
  return new Uint8Array(Number(len));
};
OutputStream.writeZeroes = function (len) {
  return this.write(zeroes(len));
};
OutputStream.blockingWriteZeroesAndFlush = function (len) {
  return this.blockingWriteAndFlush(zeroes(len));
};

// Guest stdout/stderr arrive as writes to this worker's process streams: keep them, up to the cap, for the caller.
function capture(stream, name) {
  stream.write = (chunk, _enc, cb) => {
    const out = call.out;
    if (out) {
      out.written = true;
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      const room = OUTPUT_CAP_BYTES - out[name].length;
      if (bytes.length > room) out.truncated = true;
      if (room > 0) out[name] = Buffer.concat([out[name], bytes.subarray(0, room)]);
    }
    if (typeof cb === 'function') cb();
    else if (typeof _enc === 'function') _enc();
    return true;
  };
}
capture(process.stdout, 'stdout');
capture(process.stderr, 'stderr');

export function compileFsPolicy(rules) {
  return rules.map((r) => ({ matches: compileGlob(r.uri.replace(/^fs:\/\//, '').replace(/^\/+/, '')), read: r.access.includes('read'), write: r.access.includes('write') }));
}

function normalize(base, path) {
  const parts = base ? base.split('/') : [];
  for (const seg of path.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') {
      if (!parts.length) throw 'not-permitted';
      parts.pop();
    } else parts.push(seg);
  }
  return parts.join('/');
}

function allowed(path, access) {
  return call.fs.some((r) => r[access] && r.matches(path));
}

const descriptorPaths = new WeakMap();
const patched = new WeakSet();

// jco checks resources with instanceof, so the shim's Descriptor class is patched rather than wrapped.
function confineFilesystem(Descriptor) {
  if (patched.has(Descriptor)) return;
  patched.add(Descriptor);
  const P = Descriptor.prototype;
  const at = (name, access, index = 1) => {
    const original = P[name];
    if (typeof original !== 'function') return;
    P[name] = function (...args) {
      const path = normalize(descriptorPaths.get(this) ?? '', args[index]);
      const need = typeof access === 'function' ? access(args) : access;
      if (!allowed(path, need)) throw 'access';
      const result = original.apply(this, args);
      if (name === 'openAt' && result && typeof result === 'object') descriptorPaths.set(result, path);
      return result;
    };
  };
  at('openAt', ([, , open, flags]) => (flags?.write || flags?.mutateDirectory || open?.create || open?.truncate ? 'write' : 'read'));
  at('statAt', 'read');
  at('readlinkAt', 'read', 0);
  at('metadataHashAt', 'read');
  at('createDirectoryAt', 'write', 0);
  at('removeDirectoryAt', 'write', 0);
  at('unlinkFileAt', 'write', 0);
  at('setTimesAt', 'write');
  at('renameAt', 'write', 0);
  // No symlinks: the shim follows them, so one would let a path the rules allow reach a file they do not (or, raced
  // against a rename, a file outside the workspace). Path rules are only sound on a tree without links.
  P.symlinkAt = function () {
    throw 'not-permitted';
  };
  // A hard link makes its source readable and writable under the new name: the source must allow both, and the new
  // name is checked where it is made (the destination descriptor, not this one).
  const link = P.linkAt;
  P.linkAt = function (oldPathFlags, oldPath, newDescriptor, newPath) {
    const source = normalize(descriptorPaths.get(this) ?? '', oldPath);
    if (!allowed(source, 'read') || !allowed(source, 'write')) throw 'access';
    if (!allowed(normalize(descriptorPaths.get(newDescriptor) ?? '', newPath), 'write')) throw 'access';
    return link.call(this, oldPathFlags, oldPath, newDescriptor, newPath);
  };
  // The destination of a rename must be writable too.
  const rename = P.renameAt;
  P.renameAt = function (oldPath, newDescriptor, newPath) {
    if (!allowed(normalize(descriptorPaths.get(newDescriptor) ?? '', newPath), 'write')) throw 'access';
    return rename.call(this, oldPath, newDescriptor, newPath);
  };
}

function hostAllowed(authority) {
  const [host, port] = authority.toLowerCase().replace(/^\[(.*)\](.*)$/, '$1$2').split(/:(?=\d+$)/);
  return call.hosts.some((rule) => {
    const [h, p] = rule.toLowerCase().split(/:(?=\d+$)/);
    if (p !== undefined && p !== (port ?? '')) return false;
    return h.startsWith('*.') ? host.endsWith(h.slice(1)) && host.length > h.length - 1 : host === h;
  });
}

const outgoingHandler = {
  handle(request, options) {
    const authority = request.authority() ?? '';
    if (!authority || !hostAllowed(authority)) throw { tag: 'HTTP-request-denied' };
    const host = authority.replace(/^\[(.*)\].*$/, '$1').replace(/:\d+$/, '');
    if (!call.allowPrivate && (isForbiddenName(host) || (/^[\d.]+$|:/.test(host) && isForbiddenAddress(host)))) {
      throw { tag: 'HTTP-request-denied' };
    }
    return httpShim.outgoingHandler.handle(request, options);
  },
};

// wasi:keyvalue reaches the tenant's store on the main thread: a request over the call's port, then a blocking
// wait on a shared flag (the guest's call is synchronous), then the reply read synchronously off the port.
function hostCall(op, args) {
  const bridge = call.bridge;
  if (!bridge) throw { tag: 'access-denied' };
  const flag = new Int32Array(bridge.flag);
  Atomics.store(flag, 0, 0);
  bridge.port.postMessage({ op, args });
  for (;;) {
    Atomics.wait(flag, 0, 0, 1000);
    const m = receiveMessageOnPort(bridge.port);
    if (m) {
      if (m.message.error) throw { tag: 'other', val: m.message.error };
      return m.message.value;
    }
  }
}

class Bucket {
  constructor(name) {
    this.name = name;
  }
  get(key) {
    const v = hostCall('get', [this.name, key]);
    return v === null ? undefined : new Uint8Array(v);
  }
  set(key, value) {
    hostCall('set', [this.name, key, value]);
  }
  delete(key) {
    hostCall('delete', [this.name, key]);
  }
  exists(key) {
    return hostCall('exists', [this.name, key]);
  }
  listKeys(cursor) {
    const r = hostCall('list', [this.name, cursor ?? null]);
    return { keys: r.keys, cursor: r.cursor ?? undefined };
  }
}

// Standard input exists (a JS engine component asks for it before its first console.log) but is closed: reading
// the node's own standard input would take the operator's keystrokes, or block.
let stdinStream = null;
const closedStream = () => {
  throw { tag: 'closed' };
};
function closedStdin(base) {
  if (!stdinStream) {
    stdinStream = base.getStdin();
    Object.assign(stdinStream, { read: closedStream, blockingRead: closedStream, skip: closedStream, blockingSkip: closedStream });
  }
  return stdinStream;
}

/** The import object of one instance: environment, workspace and configuration are fixed per instance. */
export function grantedImports(grants) {
  const shim = new WASIShim({
    sandbox: { env: Object.fromEntries(grants.env), args: [], preopens: grants.workspace ? { '/': grants.workspace } : {} },
    sockets: createSockets({ enableNetwork: false }),
    http: { ...httpShim, outgoingHandler },
  });
  const imports = shim.getImportObject();
  confineFilesystem(imports['wasi:filesystem/types'].Descriptor);
  // The host's working directory and standard input are the node's, not the plugin's.
  imports['wasi:cli/environment'] = { ...imports['wasi:cli/environment'], initialCwd: () => (grants.workspace ? '/' : undefined) };
  const baseStdin = imports['wasi:cli/stdin'];
  imports['wasi:cli/stdin'] = { getStdin: () => closedStdin(baseStdin) };
  const config = new Map(grants.config);
  return {
    ...imports,
    'wasi:cli/exit': {
      exit: (status) => {
        throw new GuestExit(`the plugin called exit (${status?.tag === 'err' ? 'error' : 'ok'})`);
      },
      exitWithCode: (code) => {
        throw new GuestExit(`the plugin called exit (${code})`);
      },
    },
    'wasi:config/store': { get: (key) => config.get(key), getAll: () => [...config] },
    'wasi:keyvalue/store': {
      Bucket,
      open: (identifier) => {
        if (!/^[A-Za-z0-9_.-]{1,64}$/.test(identifier)) throw { tag: 'no-such-store' };
        return new Bucket(identifier);
      },
    },
  };
}
