import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deviceSessionAddress, type Bus } from '../../runtime/index.ts';
import { authorize, decide, demoUser, redeem } from '../helpers/identity.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

interface Frame {
  address: string;
  value: unknown;
  activeStateIds: string[];
  event?: { type: string };
  at: number;
}

/** Opens `POST /v1/viz/watch` and reads its event stream frame by frame, as the viewer page's script does. */
async function openWatch(p: TestPlatform, credential: string, address: string) {
  const res = await request(`${p.url}/v1/viz/watch`, {
    method: 'POST',
    headers: { host: `api.${p.config.domain}`, authorization: `Bearer ${credential}`, 'content-type': 'application/json' },
    body: JSON.stringify({ address }),
  });
  const chunks = res.body[Symbol.asyncIterator]();
  let buffer = '';
  return {
    status: res.statusCode,
    headers: res.headers,
    /** The next data frame, or null when the server ended the stream. */
    async next(timeoutMs = 5_000): Promise<Frame | null> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const end = buffer.indexOf('\n\n');
        if (end >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = block.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim()).join('\n');
          if (data) return JSON.parse(data) as Frame;
          continue;
        }
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no frame within ${timeoutMs} ms; got ${JSON.stringify(buffer)}`)), Math.max(1, deadline - Date.now()))));
        try {
          const r = await Promise.race([chunks.next(), timeout]);
          if (r.done) return null;
          buffer += Buffer.from(r.value).toString('utf8');
        } finally {
          clearTimeout(timer);
        }
      }
    },
    close: () => res.body.destroy(),
  };
}

/** Counts live subscriptions to actors' transition subjects, to see that a closed stream leaves no watch behind. */
function countTransitionSubscriptions(bus: Bus) {
  const live = new Set<object>();
  const subscribe = bus.subscribe.bind(bus);
  bus.subscribe = (subject, handler) => {
    const unsub = subscribe(subject, handler);
    if (!subject.startsWith('actor.inspect.transition.')) return unsub;
    const token = {};
    live.add(token);
    return () => {
      live.delete(token);
      unsub();
    };
  };
  return () => live.size;
}

describe('statechart viewer API', () => {
  let p: TestPlatform;
  let ownerKey: string;
  let viewerKey: string;
  let accountId: string;
  let otherAccountId: string;
  let liveSubscriptions: () => number;
  const accountActor = (id: string) => `account/${id}/${id}`;
  const watch = (body: unknown, credential?: string) =>
    p.call('POST', '/v1/viz/watch', { json: body, ...(credential ? { headers: { authorization: `Bearer ${credential}` } } : {}) });

  beforeAll(async () => {
    p = await startTestPlatform();
    ownerKey = p.node.demo!.userKey;
    accountId = p.node.demo!.accountId;
    const { admin } = p.node.services;
    const viewer = await admin.createPrincipal({ account: accountId, name: 'dashboard', role: 'viewer' });
    viewerKey = (await admin.createKey({ principal: viewer.id })).key;
    otherAccountId = (await admin.createAccount({ name: 'Other tenant' })).id;
    await admin.setBudget({ account: otherAccountId, credits: 5 });
    liveSubscriptions = countTransitionSubscriptions(p.node.services.bus);
  });
  afterAll(() => p.close());

  it('[SURF-13] a workflow run is watched live: waiting for its signal, then completed', async () => {
    const w = await p.node.services.admin.putWorkflow({ account: accountId, definition: { name: 'watched', description: '', start: 'wait', steps: { wait: { type: 'signal', signal: 'go', next: 'done' }, done: { type: 'succeed' } } } });
    const auth = { authorization: `Bearer ${ownerKey}` };
    const run = (await p.call('POST', '/v1/workflow-runs', { headers: auth, json: { workflow_id: w.id } })).json.data;
    const watch = await openWatch(p, ownerKey, `workflow-run/${accountId}/${run.id}`);
    expect(watch.status).toBe(200);
    expect((await watch.next())!.value).toBe('awaitingSignal');
    await p.call('POST', `/v1/workflow-runs/${run.id}/signal`, { headers: auth, json: { signal: 'go' } });
    const frames: Frame[] = [];
    for (let f = await watch.next(); f; f = await watch.next()) frames.push(f);
    // The signal ends the run (its status is completed); the run tells what waits on its end, then is final.
    expect(frames[0]).toMatchObject({ value: 'ending', event: { type: 'SIGNAL' } });
    expect(frames.at(-1)).toMatchObject({ value: 'completed' });
  });

  it('refuses a request without a credential (403)', async () => {
    const res = await watch({ address: accountActor(accountId) });
    expect(res.status).toBe(403);
    expect(res.json).toMatchObject({ category: 'authentication', code: 'MGMT_CREDENTIAL_MISSING' });
  });

  it("answers another account's actor exactly like a missing one (404)", async () => {
    const other = await watch({ address: accountActor(otherAccountId) }, ownerKey);
    expect(other.status).toBe(404);
    expect(other.json).toEqual({ category: 'not_found', code: 'MGMT_ACTOR_NOT_FOUND', message: 'no such actor in this account' });
    const missing = await watch({ address: `account/${accountId}/00000000-0000-4000-8000-000000000000` }, ownerKey);
    expect(missing.status).toBe(404);
    expect(missing.json).toEqual(other.json);
    const unknownKind = await watch({ address: `widget/${accountId}/w1` }, ownerKey);
    expect(unknownKind.status).toBe(404);
    expect(unknownKind.json).toEqual(other.json);
  });

  it('rejects a malformed address (400)', async () => {
    for (const body of [{ address: 'account/only-two' }, { address: 'a/b/c/d' }, { address: 'account/x y/z' }, { address: 7 }, {}, ['account/a/a']]) {
      const res = await watch(body, ownerKey);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.json.code).toBe('MGMT_INVALID_BODY');
    }
  });

  it('shows platform actors (device sessions) to owners and admins only', async () => {
    const a = await authorize(p, 'viz-test');
    const session = await p.node.services.deviceFlow.lookup(a.user_code);
    const address = deviceSessionAddress(session!.id);
    const denied = await watch({ address }, viewerKey);
    expect(denied.status).toBe(404);
    expect(denied.json.code).toBe('MGMT_ACTOR_NOT_FOUND');

    const stream = await openWatch(p, ownerKey, address);
    try {
      expect(stream.status).toBe(200);
      expect(await stream.next()).toMatchObject({ address, value: 'pending', activeStateIds: ['DeviceSession', 'DeviceSession.pending'] });
      // Denial, then the client's poll: the session reaches a final state and the stream ends with it.
      await decide(p, a.user_code, await demoUser(p), false);
      expect(await stream.next()).toMatchObject({ value: 'denied', event: { type: 'DENY' }, activeStateIds: ['DeviceSession', 'DeviceSession.denied'] });
      expect((await redeem(p, a.device_code, 'viz-test')).status).toBe(403);
      expect(await stream.next()).toMatchObject({ value: 'denialReported', event: { type: 'REDEEM' } });
      expect(await stream.next()).toBeNull();
    } finally {
      stream.close();
    }
  });

  it('[SURF-08] streams the current state, then each transition as it happens, as SSE on a POST, and drops the watch when the client goes', async () => {
    expect((await p.call('GET', '/v1/viz/watch', { headers: { authorization: `Bearer ${viewerKey}` } })).status).toBe(404);
    await p.node.services.admin.setBudget({ account: accountId, credits: 50 });
    const address = accountActor(accountId);
    const stream = await openWatch(p, viewerKey, address);
    try {
      expect(stream.status).toBe(200);
      expect(stream.headers['content-type']).toBe('text/event-stream; charset=utf-8');
      expect(stream.headers['cache-control']).toBe('no-store');
      expect(stream.headers['x-request-id']).toBeTruthy();

      const first = await stream.next();
      expect(first).toEqual({
        address,
        value: { status: 'active', budget: 'funded' },
        activeStateIds: ['Account', 'Account.status', 'Account.status.active', 'Account.budget', 'Account.budget.funded'],
        at: expect.any(Number),
      });
      expect(liveSubscriptions()).toBe(1);

      await p.node.services.actors.ask(address, { type: 'SUSPEND' });
      const suspended = await stream.next();
      expect(suspended).toEqual({
        address,
        value: { status: 'suspended', budget: 'funded' },
        activeStateIds: ['Account', 'Account.status', 'Account.status.suspended', 'Account.budget', 'Account.budget.funded'],
        event: { type: 'SUSPEND' },
        at: expect.any(Number),
      });
      expect(suspended!.at).toBeGreaterThanOrEqual(first!.at);

      await p.node.services.actors.ask(address, { type: 'DEBIT', amount: 50, requestId: 'r1' });
      expect(await stream.next()).toMatchObject({ value: { status: 'suspended', budget: 'exhausted' }, event: { type: 'DEBIT' } });
      // Frames never carry the actor's context or the event's payload.
      expect(JSON.stringify(suspended)).not.toContain('credits');
    } finally {
      stream.close();
      await p.node.services.actors.ask(address, { type: 'RESUME' });
    }
    await expect.poll(liveSubscriptions, { timeout: 5_000 }).toBe(0);
  });

  it('[SURF-08] a client that leaves while the actor is being read leaves no watch behind', async () => {
    const actors = p.node.services.actors;
    const read = actors.read.bind(actors);
    let reading!: () => void;
    const started = new Promise<void>((resolve) => (reading = resolve));
    // The read is held until the client has gone, so the stream is set up for a response that has closed already.
    actors.read = (async (address: string) => {
      reading();
      await new Promise((r) => setTimeout(r, 300));
      return read(address);
    }) as typeof actors.read;
    try {
      const abort = new AbortController();
      const res = request(`${p.url}/v1/viz/watch`, {
        method: 'POST',
        headers: { host: `api.${p.config.domain}`, authorization: `Bearer ${viewerKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ address: accountActor(accountId) }),
        signal: abort.signal,
      });
      await started;
      expect(liveSubscriptions()).toBe(1);
      abort.abort();
      await expect(res).rejects.toThrow();
      await new Promise((r) => setTimeout(r, 400));
      await expect.poll(liveSubscriptions, { timeout: 5_000 }).toBe(0);
    } finally {
      actors.read = read;
    }
  });
});

describe('statechart viewer page and machine route', () => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await startTestPlatform();
  });
  afterAll(() => p.close());

  it('GET /v1/viz/machines/:kind answers the SVG and DOT of a machine to a reader', async () => {
    const auth = { authorization: `Bearer ${p.node.demo!.userKey}` };
    const res = await p.call('GET', '/v1/viz/machines/account', { headers: auth });
    expect(res.status, res.text).toBe(200);
    expect(Object.keys(res.json.data).sort()).toEqual(['dot', 'kind', 'svg']);
    expect(res.json.data.kind).toBe('account');
    expect(res.json.data.svg).toMatch(/^<svg/);
    expect(res.json.data.dot).toMatch(/^digraph "Account"/);

    const unknown = await p.call('GET', '/v1/viz/machines/widget', { headers: auth });
    expect(unknown.status).toBe(404);
    expect(unknown.json.code).toBe('MGMT_STATECHART_NOT_FOUND');
    expect((await p.call('GET', '/v1/viz/machines/account')).status).toBe(403);
  });

  it('GET /viz lists every machine, draws the chosen one and allows only its own script', async () => {
    const index = await p.call('GET', '/viz');
    expect(index.status).toBe(200);
    expect(index.headers['content-type']).toBe('text/html; charset=utf-8');
    const csp = String(index.headers['content-security-policy']);
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).toContain("style-src 'unsafe-inline'");
    expect(csp).toContain("default-src 'none'");
    expect(index.text).toContain('href="/viz?machine=device-session"');
    expect(index.text).toContain('href="/viz?machine=account"');
    expect(index.text).toContain('<script src="/viz/app.js" defer></script>');
    expect(index.text).not.toMatch(/<script>|<script [^>]*>[^<]/);
    expect(index.text).not.toContain('<svg');

    const chosen = await p.call('GET', '/viz?machine=account');
    expect(chosen.status).toBe(200);
    expect(chosen.text).toContain('<div id="chart" data-machine="account"><svg');
    expect(chosen.text).toContain('id="state&#45;Account.status.suspended"');

    const unknown = await p.call('GET', '/viz?machine=%3Cscript%3E');
    expect(unknown.status).toBe(404);
    expect(unknown.text).toContain('There is no machine called &quot;&lt;script&gt;&quot;.');

    const script = await p.call('GET', '/viz/app.js');
    expect(script.status).toBe(200);
    expect(script.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(script.text).toContain("fetch('/v1/viz/watch'");
    expect(script.text).not.toMatch(/localStorage|sessionStorage|document\.cookie/);
  });
});
