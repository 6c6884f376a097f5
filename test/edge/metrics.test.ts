import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KINDS } from '../../actors/index.ts';
import { readNodeFile } from '../../bin/data-dir.ts';
import { createLogger } from '../../bin/logger.ts';
import { ConfigError, loadConfig, SHARD_COUNT } from '../../runtime/index.ts';
import { sandboxSizing } from '../../runtime/core/sandbox/index.ts';
import { a2aCall, agentHost, bearer } from '../helpers/a2a.ts';
import { host as mcpHost, openSession, rpc } from '../helpers/mcp.ts';
import { rawExchange } from '../helpers/raw-socket.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

const SCRAPE_TOKEN = 'scrape-token-0123456789abcdef0123456789abcdef';
const OPERATOR_HEADER = 'x-platform-operator-token';
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;

/** An address of this machine that is not loopback: requests from it are what a remote scraper's look like. */
const EXTERNAL = Object.values(os.networkInterfaces())
  .flat()
  .find((i) => i && i.family === 'IPv4' && !i.internal)?.address;

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The Prometheus text format, strictly: every line is a comment or `name{labels} value`, or the test fails. */
function parse(text: string) {
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const type = /^# TYPE (\S+) (counter|gauge|histogram|summary|untyped)$/.exec(line);
    if (type) {
      types.set(type[1]!, type[2]!);
      continue;
    }
    if (line.startsWith('# HELP ')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not a line of the Prometheus text format: ${JSON.stringify(line)}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  /** The sum of the samples of `name` whose labels include `labels` (0 when none). */
  const value = (name: string, labels: Record<string, string> = {}) =>
    samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((n, s) => n + s.value, 0);
  /** The label names of a family's samples (a histogram's `le` left out). */
  const labelNames = (family: string) => [...new Set(samples.filter((s) => s.name === family || s.name.startsWith(`${family}_`)).flatMap((s) => Object.keys(s.labels)))].filter((k) => k !== 'le').sort();
  return { types, samples, value, labelNames };
}


/** GET /metrics from another address of this machine (not loopback), through the same port (Host: the address). */
async function fromOutside(p: TestPlatform, headers: Record<string, string> = {}) {
  const res = await request(`http://${EXTERNAL}:${p.port}/metrics`, { headers });
  const text = await res.body.text();
  return { status: res.statusCode, json: res.headers['content-type']?.toString().startsWith('application/json') ? JSON.parse(text) : undefined, text };
}

describe('[SURF-01] metrics at /metrics on the management host', () => {
  let p: TestPlatform;
  let dataDir: string;
  let operatorToken: string;
  let logs = '';
  const scrape = async (headers: Record<string, string> = { [OPERATOR_HEADER]: operatorToken }, host?: string) => {
    const res = await p.call('GET', '/metrics', { headers, ...(host ? { host } : {}) });
    expect(res.status, res.text).toBe(200);
    return parse(res.text);
  };

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'metrics-'));
    // The node's own logger configuration at debug, writing into `logs`: what is logged at which level is checked.
    const sink = new Writable({ write: (chunk, _e, cb) => ((logs += chunk.toString()), cb()) });
    p = await startTestPlatform({
      logger: createLogger('debug', sink),
      writeNodeFile: true,
      env: { PLATFORM_DATA_DIR: dataDir, PLATFORM_METRICS_TOKEN: SCRAPE_TOKEN, HOST: '0.0.0.0' },
    });
    // The operator's token as the operator finds it: in the data directory's node.json.
    operatorToken = readNodeFile(dataDir)!.operator_token;
  }, 120_000);
  afterAll(async () => {
    await p?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('serves the Prometheus text format to the operator token from loopback, on both management hosts', async () => {
    for (const host of [`api.${p.config.domain}`, p.config.domain]) {
      const res = await p.call('GET', '/metrics', { host, headers: { [OPERATOR_HEADER]: operatorToken } });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
      expect(res.headers['cache-control']).toBe('no-store');
      expect(() => parse(res.text)).not.toThrow();
    }
  });

  it('serves the scrape token as Authorization: Bearer, from loopback and from another address', async () => {
    expect((await p.call('GET', '/metrics', { headers: bearer(SCRAPE_TOKEN) })).status).toBe(200);
    expect((await p.call('GET', '/metrics', { headers: { authorization: `bearer  ${SCRAPE_TOKEN} ` } })).status).toBe(200);
    if (!EXTERNAL) throw new Error('this machine has no non-loopback IPv4 address to test remote scrapes from');
    // As Prometheus scrapes a node: at its address, the Host header naming that address.
    const remote = await fromOutside(p, bearer(SCRAPE_TOKEN));
    expect(remote.status).toBe(200);
    expect(remote.text).toContain('# TYPE platform_http_requests_total counter');
    const named = await request(`http://${EXTERNAL}:${p.port}/metrics?x=1`, { headers: { host: `api.${p.config.domain}`, ...bearer(SCRAPE_TOKEN) } });
    expect(named.statusCode).toBe(200);
    await named.body.dump();
  });

  it('refuses everyone else with the management error envelope, on both management hosts', async () => {
    const key = p.node.demo!.userKey;
    const cases: [Record<string, string>, number, string, string][] = [
      [{}, 403, 'authentication', 'MGMT_CREDENTIAL_MISSING'],
      [{ [OPERATOR_HEADER]: `${operatorToken}x` }, 403, 'permission', 'MGMT_OPERATOR_ONLY'],
      [{ [OPERATOR_HEADER]: '' }, 403, 'permission', 'MGMT_OPERATOR_ONLY'],
      [bearer('scrape-token-0123456789abcdef0123456789abcdeX'), 403, 'permission', 'MGMT_OPERATOR_ONLY'],
      [bearer(operatorToken), 403, 'permission', 'MGMT_OPERATOR_ONLY'],
      [{ [OPERATOR_HEADER]: SCRAPE_TOKEN }, 403, 'permission', 'MGMT_OPERATOR_ONLY'],
      // A tenant's valid API key is not the operator's, in any header form.
      [bearer(key), 403, 'permission', 'MGMT_OPERATOR_ONLY'],
      [{ 'x-api-key': key }, 403, 'permission', 'MGMT_OPERATOR_ONLY'],
      [{ authorization: `Basic ${Buffer.from(`x:${SCRAPE_TOKEN}`).toString('base64')}` }, 403, 'permission', 'MGMT_OPERATOR_ONLY'],
    ];
    for (const host of [`api.${p.config.domain}`, p.config.domain]) {
      for (const [headers, status, category, code] of cases) {
        const res = await p.call('GET', '/metrics', { host, headers });
        expect([res.status, res.json], `${host} ${JSON.stringify(headers)}`).toEqual([status, { category, code, message: expect.any(String) }]);
        expect(res.text).not.toContain('platform_');
      }
    }
    expect((await p.call('GET', '/metrics')).json.message).toContain('Authorization: Bearer');
  });

  it('takes the operator token from loopback only', async () => {
    if (!EXTERNAL) throw new Error('this machine has no non-loopback IPv4 address to test remote scrapes from');
    const remote = await fromOutside(p, { [OPERATOR_HEADER]: operatorToken });
    expect([remote.status, remote.json?.code]).toEqual([403, 'MGMT_OPERATOR_ONLY']);
    const bare = await fromOutside(p);
    expect([bare.status, bare.json?.code]).toEqual([403, 'MGMT_CREDENTIAL_MISSING']);
  });

  it('is served at a Host that names no surface (a node scraped by its address), never on the gateway hosts', async () => {
    const headers = { [OPERATOR_HEADER]: operatorToken, ...bearer(SCRAPE_TOKEN) };
    for (const host of [`127.0.0.1:${p.port}`, `elsewhere.${p.config.domain}`, 'node-7.internal']) {
      const res = await p.call('GET', '/metrics', { host, headers });
      expect([res.status, res.headers['content-type']], host).toEqual([200, 'text/plain; version=0.0.4; charset=utf-8']);
      expect((await p.call('GET', '/metrics', { host })).json, host).toMatchObject({ category: 'authentication', code: 'MGMT_CREDENTIAL_MISSING' });
    }
    // Only that path: anything else at such a Host is still no service.
    for (const path of ['/metricsx', '/metrics/x', '/healthz', '/v1/platform-cli/config']) {
      const res = await p.call('GET', path, { host: `127.0.0.1:${p.port}`, headers });
      expect([res.status, res.json?.code], path).toEqual([404, 'EDGE_UNKNOWN_HOST']);
    }
    const mcp = await p.call('GET', '/metrics', { host: mcpHost(p, 'demo'), headers });
    const agent = await p.call('GET', '/metrics', { host: agentHost(p), headers });
    // The demo MCP gateway is private: it refuses the credential (not one of its tokens) before routing.
    expect([mcp.status, agent.status]).toEqual([401, 404]);
    for (const res of [mcp, agent]) expect(res.text).not.toContain('platform_http_requests_total');
  });

  it('names every metric family with its type and exact labels', async () => {
    const m = await scrape();
    const families: [string, string, string[]][] = [
      ['platform_http_requests_total', 'counter', ['method', 'status', 'surface']],
      ['platform_http_request_duration_seconds', 'histogram', ['method', 'surface']],
      ['platform_http_requests_in_flight', 'gauge', ['surface']],
      ['platform_edge_refused_total', 'counter', ['reason']],
      ['platform_lane_slots', 'gauge', ['lane']],
      ['platform_lane_in_flight', 'gauge', ['lane']],
      ['platform_lane_queued', 'gauge', ['lane']],
      ['platform_lane_rejected_total', 'counter', ['lane']],
      ['platform_lane_completed_total', 'counter', ['lane']],
      ['platform_push_deliveries_total', 'counter', ['lane', 'outcome']],
      ['platform_actors_active', 'gauge', ['kind']],
      ['platform_shards_owned', 'gauge', []],
      ['platform_cluster_members', 'gauge', []],
      ['platform_sandbox_threads', 'gauge', []],
      ['platform_sandbox_calls_total', 'counter', []],
      ['platform_sandbox_wakeups_total', 'counter', []],
      ['platform_effects_started_total', 'counter', ['effect', 'kind']],
      ['platform_effects_finished_total', 'counter', ['effect', 'kind', 'outcome']],
      ['platform_effect_duration_seconds', 'histogram', ['effect', 'kind']],
      ['nodejs_eventloop_lag_seconds', 'gauge', []],
      ['nodejs_eventloop_lag_p50_seconds', 'gauge', []],
      ['nodejs_eventloop_lag_p99_seconds', 'gauge', []],
      ['nodejs_eventloop_lag_max_seconds', 'gauge', []],
      ['nodejs_heap_size_used_bytes', 'gauge', []],
      ['nodejs_gc_duration_seconds', 'histogram', ['kind']],
      ['process_cpu_seconds_total', 'counter', []],
      ['process_resident_memory_bytes', 'gauge', []],
    ];
    for (const [name, type, labels] of families) {
      expect(m.types.get(name), name).toBe(type);
      if (name !== 'nodejs_gc_duration_seconds') expect(m.labelNames(name), name).toEqual(labels);
    }
    // Fixed label values: every lane, surface and actor kind is listed, and nothing else.
    const valuesOf = (name: string, label: string) => [...new Set(m.samples.filter((s) => s.name === name).map((s) => s.labels[label]))].sort();
    expect(valuesOf('platform_lane_slots', 'lane')).toEqual(['effects', 'sandbox', 'tasks']);
    expect(valuesOf('platform_lane_queued', 'lane')).toEqual(['effects', 'push_best_effort', 'push_reserved', 'sandbox', 'tasks']);
    expect(valuesOf('platform_http_requests_in_flight', 'surface')).toEqual(['a2a', 'edge', 'management', 'mcp']);
    expect(valuesOf('platform_actors_active', 'kind')).toEqual(Object.keys(KINDS).sort());
    expect(valuesOf('platform_edge_refused_total', 'reason')).toEqual(['headers_too_large', 'malformed', 'timeout', 'tls', 'too_many_connections']);
    // A single node owns every shard and is its cluster's one member.
    expect([m.value('platform_shards_owned'), m.value('platform_cluster_members')]).toEqual([SHARD_COUNT, 1]);
    // The scrape in progress is the one request in flight.
    expect(['management', 'mcp', 'a2a', 'edge'].map((surface) => m.value('platform_http_requests_in_flight', { surface }))).toEqual([1, 0, 0, 0]);
    expect(m.value('platform_lane_slots', { lane: 'sandbox' })).toBeGreaterThanOrEqual(4);
  });

  it('counts requests of every surface by method and status, with their latency', async () => {
    const key = p.node.demo!.userKey;
    const before = await scrape();
    expect((await p.call('GET', '/v1/capabilities', { headers: bearer(key) })).status).toBe(200);
    expect((await p.call('GET', '/v1/capabilities')).status).toBe(403);
    // An MCP session on the demo gateway and a call of its plugin's tool (which runs in the sandbox lane).
    const session = await openSession(p, 'demo', bearer(key));
    const call = await rpc(p, 'demo', { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'calc_add', arguments: { a: 2, b: 3 } } }, session.headers);
    expect([call.status, call.message.result?.content]).toEqual([200, [{ type: 'text', text: '5' }]]);
    // The demo agent's card and one JSON-RPC call to its gateway.
    expect((await p.call('GET', '/.well-known/agent-card.json', { host: agentHost(p) })).status).toBe(200);
    // A service principal's key (agent gateways refuse users' keys): an unknown task is a JSON-RPC error, HTTP 200.
    const got = await a2aCall(p, { jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'no-such-task' } }, { headers: bearer(p.node.demo!.serviceKey) });
    expect([got.status, got.json.error?.code]).toEqual([200, -32001]);
    // The edge itself: no service at this host, and a request with two Host headers.
    expect((await p.call('GET', '/', { host: `nothing.${p.config.domain}` })).status).toBe(404);
    expect(await rawExchange(p.port, 'GET / HTTP/1.1\r\nHost: api.localhost\r\nHost: mcp-demo.localhost\r\nConnection: close\r\n\r\n')).toMatch(/^HTTP\/1\.1 400 /);
    const after = await scrape();

    const delta = (labels: Record<string, string>) => after.value('platform_http_requests_total', labels) - before.value('platform_http_requests_total', labels);
    // The scrape before is counted too (as it closes, after it rendered): one more management GET 200.
    expect(delta({ surface: 'management', method: 'GET', status: '200' })).toBe(2);
    expect(delta({ surface: 'management', method: 'GET', status: '403' })).toBe(1);
    // initialize and tools/call answer 200, notifications/initialized 202.
    expect(delta({ surface: 'mcp', method: 'POST', status: '200' })).toBe(2);
    expect(delta({ surface: 'mcp', method: 'POST', status: '202' })).toBe(1);
    expect(delta({ surface: 'a2a', method: 'GET', status: '200' })).toBe(1);
    expect(delta({ surface: 'a2a', method: 'POST', status: '200' })).toBe(1);
    expect(delta({ surface: 'edge', method: 'GET', status: '404' })).toBe(1);
    expect(delta({ surface: 'edge', method: 'GET', status: '400' })).toBe(1);
    const observed = (surface: string, method: string) =>
      after.value('platform_http_request_duration_seconds_count', { surface, method }) - before.value('platform_http_request_duration_seconds_count', { surface, method });
    expect([observed('management', 'GET'), observed('mcp', 'POST'), observed('a2a', 'GET'), observed('a2a', 'POST'), observed('edge', 'GET')]).toEqual([3, 3, 1, 1, 2]);
    expect(after.value('platform_http_request_duration_seconds_sum', { surface: 'mcp' })).toBeGreaterThan(before.value('platform_http_request_duration_seconds_sum', { surface: 'mcp' }));
    // The tool call went through the sandbox lane, and a sandbox thread answered it: twice, since it was the node's first
    // plugin call and the thread asked for the code first.
    expect(after.value('platform_lane_completed_total', { lane: 'sandbox' }) - before.value('platform_lane_completed_total', { lane: 'sandbox' })).toBe(1);
    const sandboxDelta = (name: string) => after.value(name) - before.value(name);
    expect(sandboxDelta('platform_sandbox_calls_total')).toBe(2);
    // The threads start with the node's first plugin call (this one), sized from its cores (sandboxSizing). Whether that
    // call woke its thread depends on whether the thread had parked yet after loading, and whether it caught the call
    // with the code while it spun after asking for it; a wake-up is a call's, so never more than the calls
    // (sandbox-threads.test.ts counts them exactly).
    expect([before.value('platform_sandbox_threads'), after.value('platform_sandbox_threads')]).toEqual([0, sandboxSizing().threads]);
    expect(sandboxDelta('platform_sandbox_wakeups_total')).toBeLessThanOrEqual(2);
    expect(after.value('platform_sandbox_wakeups_total')).toBeLessThanOrEqual(after.value('platform_sandbox_calls_total'));
  });

  it('counts effects and active actors of the runtime by kind', async () => {
    const m = await scrape();
    // The demo seed activated its plugin: one activate effect of a plugin-version actor, run in the effects lane.
    expect(m.value('platform_effects_started_total', { kind: 'plugin-version', effect: 'activate' })).toBe(1);
    expect(m.value('platform_effects_finished_total', { kind: 'plugin-version', effect: 'activate', outcome: 'done' })).toBe(1);
    expect(m.value('platform_effect_duration_seconds_count', { kind: 'plugin-version', effect: 'activate' })).toBe(1);
    expect(m.value('platform_lane_completed_total', { lane: 'effects' })).toBeGreaterThanOrEqual(1);
    // Reading the demo upload ran in the task pool's lanes.
    expect(m.value('platform_lane_completed_total', { lane: 'tasks' })).toBeGreaterThanOrEqual(1);
    expect(m.value('platform_actors_active')).toBe(p.node.services.host.activeCount());
    expect(m.value('platform_actors_active', { kind: 'account' })).toBeGreaterThanOrEqual(1);
  });

  it('counts requests the edge refuses below routing', async () => {
    const before = await scrape();
    expect(await rawExchange(p.port, 'NOT HTTP AT ALL\r\n\r\n')).toMatch(/^HTTP\/1\.1 400 /);
    expect(await rawExchange(p.port, `GET / HTTP/1.1\r\nHost: api.localhost\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`)).toMatch(/^HTTP\/1\.1 431 /);
    const after = await scrape();
    const delta = (reason: string) => after.value('platform_edge_refused_total', { reason }) - before.value('platform_edge_refused_total', { reason });
    expect([delta('malformed'), delta('headers_too_large'), delta('timeout'), delta('too_many_connections')]).toEqual([1, 1, 0, 0]);
  });

  it('puts no tenant id, handle or path in any label', async () => {
    const m = await scrape();
    const s = p.node.services;
    const demo = p.node.demo!;
    const agent = (await s.store.agents.byHandle('demo'))!;
    const gateway = (await s.store.gateways.byHandle('demo'))!;
    const secrets = [demo.accountId, agent.id, gateway.id, demo.plugin.capabilityId, demo.userKey, operatorToken, SCRAPE_TOKEN];
    const values = m.samples.flatMap((x) => Object.values(x.labels));
    expect(values.length).toBeGreaterThan(100);
    for (const v of values) {
      expect(v).not.toMatch(UUID);
      expect(v).not.toContain('/');
      expect(['demo', 'calc', 'calc_add']).not.toContain(v);
      for (const secret of secrets) expect(v).not.toContain(secret);
    }
    // The label values a tenant could influence at all are the method and the status, and those are bounded.
    for (const x of m.samples.filter((x) => x.name === 'platform_http_requests_total')) {
      expect(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'OTHER']).toContain(x.labels.method);
      expect(x.labels.status).toMatch(/^[1-5]\d\d$/);
    }
  });

  it('logs health probes and scrapes at debug, not at info; a refused scrape and other requests at info', async () => {
    const id = (name: string) => ({ 'x-request-id': name, [OPERATOR_HEADER]: operatorToken });
    expect((await p.call('GET', '/healthz', { headers: id('probe-healthz') })).status).toBe(200);
    expect((await p.call('GET', '/readyz?verbose=1', { headers: id('probe-readyz') })).status).toBe(200);
    expect((await p.call('GET', '/metrics', { headers: id('probe-metrics') })).status).toBe(200);
    expect((await p.call('GET', '/metrics', { headers: { 'x-request-id': 'refused-scrape' } })).status).toBe(403);
    expect((await p.call('GET', '/v1/platform-cli/config', { headers: id('plain-request') })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 100));
    const lines = logs
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { level: number; reqId?: string; msg: string });
    const levels = (reqId: string) => lines.filter((l) => l.reqId === reqId).map((l) => [l.msg, l.level]);
    for (const probe of ['probe-healthz', 'probe-readyz', 'probe-metrics']) {
      expect(levels(probe), probe).toEqual([
        ['incoming request', 20],
        ['request completed', 20],
      ]);
    }
    expect(levels('refused-scrape')).toEqual([
      ['incoming request', 20],
      ['request completed', 30],
    ]);
    expect(levels('plain-request')).toEqual([
      ['incoming request', 30],
      ['request completed', 30],
    ]);
    // The operator token a probe carried is never logged.
    expect(logs).not.toContain(operatorToken);
  });
});

describe('metrics settings', () => {
  it('reads the scrape token and the loopback switch, and refuses bad values by name', () => {
    expect(loadConfig({})).toMatchObject({ metricsToken: null, metricsAllowLoopback: false });
    expect(loadConfig({ PLATFORM_METRICS_TOKEN: SCRAPE_TOKEN, PLATFORM_METRICS_ALLOW_LOOPBACK: 'true' })).toMatchObject({ metricsToken: SCRAPE_TOKEN, metricsAllowLoopback: true });
    for (const [env, name] of [
      [{ PLATFORM_METRICS_TOKEN: 'short' }, 'PLATFORM_METRICS_TOKEN'],
      [{ PLATFORM_METRICS_TOKEN: `${SCRAPE_TOKEN} x` }, 'PLATFORM_METRICS_TOKEN'],
      [{ PLATFORM_METRICS_ALLOW_LOOPBACK: 'yes' }, 'PLATFORM_METRICS_ALLOW_LOOPBACK'],
    ] as const) {
      expect(() => loadConfig(env)).toThrow(ConfigError);
      expect(() => loadConfig(env)).toThrow(name);
    }
  });
});

describe('metrics with PLATFORM_METRICS_ALLOW_LOOPBACK', () => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await startTestPlatform({ seed: false, env: { PLATFORM_METRICS_ALLOW_LOOPBACK: 'true', HOST: '0.0.0.0', PLATFORM_MAX_CONNECTIONS_PER_ADDRESS: '2' } });
  });
  afterAll(() => p?.close());

  it('counts connections refused for their address, then serves loopback without a token and no one else', async () => {
    // Two connections from loopback are held open; the third is refused before any request is read.
    const held = await Promise.all([0, 1].map(() => new Promise<net.Socket>((resolve) => { const s = net.connect(p.port, '127.0.0.1', () => resolve(s)); })));
    await new Promise((r) => setTimeout(r, 50));
    expect(await rawExchange(p.port, '')).toMatch(/^HTTP\/1\.1 503 [\s\S]*EDGE_TOO_MANY_CONNECTIONS/);
    for (const s of held) s.destroy();
    await new Promise((r) => setTimeout(r, 50));

    const res = await p.call('GET', '/metrics');
    expect([res.status, res.headers['content-type']]).toEqual([200, 'text/plain; version=0.0.4; charset=utf-8']);
    expect(parse(res.text).value('platform_edge_refused_total', { reason: 'too_many_connections' })).toBe(1);
    // Without a node file written, no operator token exists to present; a wrong one from loopback is let in all the same.
    expect((await p.call('GET', '/metrics', { headers: { [OPERATOR_HEADER]: 'wrong' } })).status).toBe(200);
    if (!EXTERNAL) throw new Error('this machine has no non-loopback IPv4 address to test remote scrapes from');
    const remote = await fromOutside(p);
    expect([remote.status, remote.json]).toEqual([403, { category: 'authentication', code: 'MGMT_CREDENTIAL_MISSING', message: expect.stringContaining('x-platform-operator-token') }]);
    expect((await fromOutside(p, bearer(SCRAPE_TOKEN))).json.code).toBe('MGMT_OPERATOR_ONLY');
  });
});
