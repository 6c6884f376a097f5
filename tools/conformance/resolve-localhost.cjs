// Preloaded into the conformance suite (node --require): *.localhost names resolve to the loopback address, as
// browsers and curl do, so the suite can address a gateway by its own host name (it cannot set a Host header).
const dns = require('node:dns');
const original = dns.lookup;
dns.lookup = function lookup(hostname, options, callback) {
  if (typeof options === 'function') [options, callback] = [{}, options];
  if (typeof options === 'number') options = { family: options };
  if (typeof hostname === 'string' && (hostname === 'localhost' || hostname.endsWith('.localhost'))) {
    if (options && options.all) return process.nextTick(callback, null, [{ address: '127.0.0.1', family: 4 }]);
    return process.nextTick(callback, null, '127.0.0.1', 4);
  }
  return original.call(this, hostname, options, callback);
};
