import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { a2aCall, bearer, request } from '../helpers/a2a.ts';
import { bindCalc, call, eventually, rulesFile, send } from '../helpers/agents.ts';
import { startReceiver, testCa, testResolver, type Answering, type Receiver, type TestCa } from '../helpers/push-receivers.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

// Generous: node, receivers and scripted model share this process and a loaded machine.
const TIMEOUT_MS = 1500;
const RETRY_DELAY_MS = 150;

/** Log lines of the node, parsed: what a delivery given up says (and what it must never say). */
function logSink() {
  const lines: Record<string, unknown>[] = [];
  const raw: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString('utf8').split('\n').filter(Boolean)) {
        raw.push(l);
        lines.push(JSON.parse(l));
      }
      done();
    },
  });
  return { logger: pino({ level: 'debug' }, stream), lines, raw };
}

describe('push notification delivery (A2A-PUSH-12..19) to HTTPS receivers of a test CA', () => {
  let ca: TestCa;
  let p: TestPlatform;
  const dns = testResolver();
  const log = logSink();
  const receivers: Receiver[] = [];
  const receiver = async (answer?: Answering) => {
    const r = await startReceiver(ca, answer);
    receivers.push(r);
    return r;
  };

  beforeAll(async () => {
    ca = testCa(['push.test', 'rebind.test']);
    p = await startTestPlatform({
      env: {
        PLATFORM_SCRIPTED_RULES: await rulesFile(),
        PLATFORM_PUSH_ALLOW_LOOPBACK: 'true',
        PLATFORM_EGRESS_EXTRA_CA_FILE: ca.caFile,
        PLATFORM_PUSH_TIMEOUT_MS: String(TIMEOUT_MS),
        PLATFORM_PUSH_RETRY_DELAY_MS: String(RETRY_DELAY_MS),
        // A small best-effort lane (one delivery in flight per account, two waiting), so a flood overflows it.
        PLATFORM_PUSH_BEST_EFFORT_SLOTS: '2',
        PLATFORM_PUSH_BEST_EFFORT_QUEUE: '2',
        PLATFORM_MODEL_PROVIDERS: 'dead=http://127.0.0.1:9/v1',
      },
      egressResolve: dns.resolve,
      logger: log.logger,
    });
    await bindCalc(p);
    await p.node.services.admin.createAgent({ account: p.node.demo!.accountId, handle: 'broken', name: 'Broken', model: 'dead/some-model' });
  });
  afterAll(async () => {
    for (const r of receivers) await r.close();
    await p?.close();
    ca?.remove();
  });

  const figures = () => p.node.services.pushDelivery.figures(p.node.demo!.accountId);
  /** A task (returnImmediately: a task even for a bare reply) with one push config sent inline. */
  async function run(text: string, config: Record<string, unknown>) {
    const res = await send(p, text, { configuration: { returnImmediately: true, taskPushNotificationConfig: config } });
    expect(res.json.error, JSON.stringify(res.json.error)).toBeUndefined();
    return res.json.result.task as { id: string; status: { state: string } };
  }
  const getTask = async (id: string) => (await call(p, 'GetTask', { id })).json.result;
  const failures = (taskId: string, lane = 'reserved') => log.lines.filter((l) => l.taskId === taskId && l.lane === lane && String(l.msg).startsWith('push notification not delivered'));

  it('[A2A-PUSH-12] [A2A-PUSH-13] each state change of a task is POSTed to its url; the body is {task} exactly as GetTask shows it', async () => {
    const r = await receiver();
    const t = await run('add 2 and 40', { url: `${r.origin('push.test')}/hooks/a?x=1` });
    const done = await eventually(async () => r.inState('TASK_STATE_COMPLETED')[0]);
    expect(done.method).toBe('POST');
    expect(done.path).toBe('/hooks/a?x=1');
    expect(done.headers['content-type']).toBe('application/a2a+json');
    expect(Object.keys(done.json)).toEqual(['task']);
    expect(done.json.task).toEqual(await getTask(t.id));
    expect(done.json.task.artifacts[0].parts[0].text).toBe('The sum is 42.');
    // The run's first committed turn (WORKING) was announced too, on the best-effort lane.
    const working = await eventually(async () => r.inState('TASK_STATE_WORKING')[0]);
    expect(working.json.task).toMatchObject({ id: t.id, status: { state: 'TASK_STATE_WORKING' } });
    // No token, no authentication: neither header.
    expect(done.headers['a2a-notification-token']).toBeUndefined();
    expect(done.headers.authorization).toBeUndefined();
  });

  it('[A2A-PUSH-14] the token is sent as A2A-Notification-Token, exactly as registered', async () => {
    const r = await receiver();
    const token = 'tok-Abc.123_~ with spaces inside';
    await run('echo token', { url: `${r.origin('push.test')}/t`, token });
    const done = await eventually(async () => r.inState('TASK_STATE_COMPLETED')[0]);
    expect(done.headers['a2a-notification-token']).toBe(token);
    expect(done.headers.authorization).toBeUndefined();
  });

  it('[A2A-PUSH-15] bearer authentication is sent as Authorization: Bearer <credentials>', async () => {
    const r = await receiver();
    await run('echo bearer', { url: `${r.origin('push.test')}/b`, token: 'tk', authentication: { scheme: 'bearer', credentials: 'secret-bearer-credential' } });
    const done = await eventually(async () => r.inState('TASK_STATE_COMPLETED')[0]);
    expect(done.headers.authorization).toBe('Bearer secret-bearer-credential');
    expect(done.headers['a2a-notification-token']).toBe('tk');
  });

  it('[A2A-PUSH-16] basic authentication is sent as Authorization: Basic <credentials>', async () => {
    const r = await receiver();
    const credentials = Buffer.from('user:secret-basic-pw').toString('base64');
    await run('echo basic', { url: `${r.origin('push.test')}/c`, authentication: { scheme: 'Basic', credentials } });
    const done = await eventually(async () => r.inState('TASK_STATE_COMPLETED')[0]);
    expect(done.headers.authorization).toBe(`Basic ${credentials}`);
  });

  it('[A2A-PUSH-13] a run whose first model turn fails is a FAILED task without an actor: its inline config is told, with the GetTask body', async () => {
    const r = await receiver();
    // Blocking: the first model turn is taken in the request, and fails (the model's host is unreachable).
    const sent = await a2aCall(
      p,
      request('SendMessage', {
        message: { messageId: `m-broken-${Date.now()}`, role: 'ROLE_USER', parts: [{ text: 'hello' }] },
        configuration: { taskPushNotificationConfig: { url: `${r.origin('push.test')}/f`, token: 'failed-token' } },
      }),
      { handle: 'broken', headers: bearer(p.node.demo!.serviceKey) },
    );
    const task = sent.json.result.task;
    expect(task.status.state).toBe('TASK_STATE_FAILED');
    const got = await eventually(async () => r.inState('TASK_STATE_FAILED')[0]);
    expect(got.headers['a2a-notification-token']).toBe('failed-token');
    const getTask = await a2aCall(p, request('GetTask', { id: task.id }), { handle: 'broken', headers: bearer(p.node.demo!.serviceKey) });
    expect(got.json).toEqual({ task: getTask.json.result });
    expect(r.received).toHaveLength(1);
  });

  it('[A2A-PUSH-18] a reserved-lane delivery that fails is retried once: a receiver that fails once then succeeds gets it', async () => {
    const before = figures().reserved;
    const r = await receiver((req) => ({ status: req.json?.task?.status?.state === 'TASK_STATE_COMPLETED' && r.inState('TASK_STATE_COMPLETED').length === 1 ? 503 : 200 }));
    const t = await run('echo retry me', { url: `${r.origin('push.test')}/r` });
    await eventually(async () => (r.inState('TASK_STATE_COMPLETED').length === 2 ? true : undefined));
    const [first, second] = r.inState('TASK_STATE_COMPLETED');
    expect(second!.body).toBe(first!.body);
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(RETRY_DELAY_MS - 20);
    await eventually(async () => (figures().reserved.delivered > before.delivered ? true : undefined));
    expect(figures().reserved.retried).toBe(before.retried + 1);
    expect(figures().reserved.failed).toBe(before.failed);
    expect(failures(t.id)).toEqual([]);
  });

  it('[A2A-PUSH-18] an endpoint that is down for the final notification misses it: two attempts, then it is given up and logged without secrets', async () => {
    const before = figures().reserved;
    const r = await receiver(() => ({ status: 500 }));
    const t = await run('echo nobody home', { url: `${r.origin('push.test')}/down`, token: 'down-token-secret', authentication: { scheme: 'bearer', credentials: 'down-bearer-secret' } });
    const [logged] = await eventually(async () => (failures(t.id).length ? failures(t.id) : undefined));
    expect(r.inState('TASK_STATE_COMPLETED')).toHaveLength(2);
    expect(logged).toMatchObject({ level: 40, lane: 'reserved', attempts: 2, code: 'PUSH_DELIVERY_REJECTED', state: 'TASK_STATE_COMPLETED', origin: r.origin('push.test') });
    expect(figures().reserved.failed).toBe(before.failed + 1);
    // Nothing more is tried.
    await new Promise((res) => setTimeout(res, RETRY_DELAY_MS * 3));
    expect(r.inState('TASK_STATE_COMPLETED')).toHaveLength(2);
    for (const line of log.raw) {
      expect(line).not.toContain('down-token-secret');
      expect(line).not.toContain('down-bearer-secret');
    }
  });

  it('[A2A-PUSH-18] a receiver that redirects has failed: the redirect is not followed', async () => {
    const target = await receiver();
    const r = await receiver(() => ({ status: 307, headers: { location: `${target.origin('push.test')}/elsewhere` } }));
    const t = await run('echo redirect', { url: `${r.origin('push.test')}/moved` });
    const [logged] = await eventually(async () => (failures(t.id).length ? failures(t.id) : undefined));
    expect(logged).toMatchObject({ code: 'EGRESS_REFUSED', lane: 'reserved', attempts: 2 });
    expect(r.inState('TASK_STATE_COMPLETED')).toHaveLength(2);
    expect(target.received).toEqual([]);
  });

  it('[A2A-PUSH-18] a receiver slower than the delivery deadline has failed (EGRESS_TIMEOUT), after its retry', async () => {
    const r = await receiver(() => ({ status: 200, delayMs: TIMEOUT_MS * 2 }));
    const t = await run('echo laggard receiver', { url: `${r.origin('push.test')}/slow` });
    const [logged] = await eventually(async () => (failures(t.id).length ? failures(t.id) : undefined));
    expect(logged).toMatchObject({ code: 'EGRESS_TIMEOUT', lane: 'reserved', attempts: 2 });
    expect(r.inState('TASK_STATE_COMPLETED')).toHaveLength(2);
  });

  it('[A2A-PUSH-12] a url whose name resolves to a private address after the config was made is refused at dispatch', async () => {
    const r = await receiver();
    // While the name resolves to the receiver (loopback, admitted by the development switch), it is delivered to.
    await run('echo rebind before', { url: `${r.origin('rebind.test')}/x` });
    await eventually(async () => r.inState('TASK_STATE_COMPLETED')[0]);
    const delivered = r.received.length;
    dns.set('rebind.test', '10.1.2.3');
    const t = await run('echo rebind after', { url: `${r.origin('rebind.test')}/x` });
    const [logged] = await eventually(async () => (failures(t.id).length ? failures(t.id) : undefined));
    expect(logged).toMatchObject({ code: 'EGRESS_REFUSED', lane: 'reserved' });
    expect(String(logged!.error)).toContain('10.1.2.3');
    expect(r.received).toHaveLength(delivered);
  });

  it('[A2A-PUSH-17] [A2A-PUSH-19] under a flood of best-effort updates, WORKING callbacks are dropped or fail without retry, and every terminal one is delivered', async () => {
    const before = figures();
    // WORKING deliveries hang until the deadline (the lane's slots stay busy) and then fail; COMPLETED ones answer.
    const r = await receiver((req) => (req.json?.task?.status?.state === 'TASK_STATE_WORKING' ? { status: 500, delayMs: 300 } : { status: 200 }));
    const n = 24;
    const tasks = await Promise.all(Array.from({ length: n }, (_, i) => run(`echo flood ${i}`, { url: `${r.origin('push.test')}/flood/${i}` })));
    const ids = () => new Set(r.inState('TASK_STATE_COMPLETED').map((x) => x.json.task.id));
    await eventually(async () => (ids().size === n ? true : undefined), 20_000);
    expect(ids()).toEqual(new Set(tasks.map((t) => t.id)));
    await eventually(async () => {
      const f = figures();
      return f.bestEffort.queued + f.bestEffort.inFlight + f.reserved.queued + f.reserved.inFlight === 0 ? f : undefined;
    }, 20_000);
    const after = figures();
    // A COMPLETED callback arrives twice only when its first attempt failed on the platform's side (its deadline
    // passed on this loaded machine after the receiver had it): the retry; none was given up.
    expect(r.inState('TASK_STATE_COMPLETED')).toHaveLength(n + after.reserved.retried - before.reserved.retried);
    expect(after.reserved.failed).toBe(before.reserved.failed);
    const working = r.inState('TASK_STATE_WORKING');
    const be = { dropped: after.bestEffort.dropped - before.bestEffort.dropped, failed: after.bestEffort.failed - before.bestEffort.failed };
    // Each WORKING callback was tried at most once (no retry), each one that reached the receiver failed, and the
    // ones that never went out were dropped: together, one per task.
    expect(new Set(working.map((x) => x.json.task.id)).size).toBe(working.length);
    expect(be.failed).toBe(working.length);
    expect(be.dropped + be.failed).toBe(n);
    expect(be.dropped).toBeGreaterThan(0);
    expect(after.bestEffort.retried).toBe(before.bestEffort.retried);
    expect(after.reserved.dropped).toBe(0);
    expect(after.reserved.delivered - before.reserved.delivered).toBe(n);
    expect(after.bestEffort.delivered).toBe(before.bestEffort.delivered);
  }, 30_000);
});
