// Runs inside preview2-shim's IO worker (loaded as a worker extension), where wasi:http requests are really made.
// Checking addresses here, at connect time, covers what a check before the request cannot: a permitted name that
// resolves (or re-resolves, DNS rebinding) to a loopback, private, link-local or metadata address.
import http from 'node:http';
import https from 'node:https';
import dns from 'node:dns';
import net from 'node:net';
import { isForbiddenAddress, isForbiddenName } from './ip-policy.mjs';

let allowPrivate = false;
let installed = false;

function denied(host) {
  const err = new Error(`egress to ${host} is not allowed (loopback, private, link-local and metadata addresses are refused)`);
  err.code = 'EACCES';
  return err;
}

function guardedLookup(hostname, options, callback) {
  dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err);
    const bad = addresses.find((a) => isForbiddenAddress(a.address));
    if (bad) return callback(denied(`${hostname} (${bad.address})`));
    if (options?.all) return callback(null, addresses);
    return callback(null, addresses[0].address, addresses[0].family);
  });
}

function refusedSocket(host) {
  const socket = new net.Socket();
  process.nextTick(() => socket.destroy(denied(host)));
  return socket;
}

function guard(proto) {
  const original = proto.createConnection;
  proto.createConnection = function createConnection(options, callback) {
    if (!allowPrivate) {
      const host = options.host ?? options.hostname ?? 'localhost';
      if (isForbiddenName(host)) return refusedSocket(host);
      if (net.isIP(host)) {
        if (isForbiddenAddress(host)) return refusedSocket(host);
      } else {
        options = { ...options, lookup: guardedLookup };
      }
    }
    return original.call(this, options, callback);
  };
}

export default function create() {
  return (operation, args) => {
    if (operation !== 'configure') throw new Error(`unknown egress-guard operation ${operation}`);
    allowPrivate = args[0] === true;
    if (!installed) {
      guard(http.Agent.prototype);
      guard(https.Agent.prototype);
      installed = true;
    }
    return allowPrivate;
  };
}
