import { finished } from 'node:stream';
import type { FastifyReply } from 'fastify';
import { isPlatformError, PlatformError, inlineSvg, isStatechartKind, parseAddress, PLATFORM_ACCOUNT, renderStatechart, statechartKinds, vizFrame, watchActor, type Caller, type Services, type VizFrame } from '../../runtime/index.ts';
import { html, Html, sendPage } from '../http/index.ts';
import { requireAuthority, type AuthServices } from './auth.ts';
import { BAD_PATH, CREDENTIAL, errorResponses } from './openapi.ts';
import { Machine, MachinePath, WatchFrame, WatchRequest, type ManagementApp } from './schemas.ts';

/**
 * The statechart viewer for operators: `GET /viz` draws any machine; its script follows one live actor through
 * `POST /v1/viz/watch`, Server-Sent Events on the response to a POST, since no surface reads cookies or query-string
 * credentials (an EventSource could carry neither a header nor a body). The operator's key lives in a form field only.
 */
const CSP = "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";
const KEEPALIVE_MS = 15_000;

const STYLE = `body{font-family:system-ui,sans-serif;background:#f4f5f7;color:#1d2330;margin:0}
main{max-width:72rem;margin:1.5rem auto;padding:0 1rem}section{background:#fff;border-radius:8px;padding:1rem 1.25rem;box-shadow:0 1px 4px #0002;margin-bottom:1rem}
h1{font-size:1.3rem}h2{font-size:1.05rem;margin-top:0}nav ul{list-style:none;padding:0;display:flex;gap:.5rem;flex-wrap:wrap}
nav a{display:inline-block;padding:.35rem .7rem;border-radius:4px;background:#e3e6ec;color:#1d2330;text-decoration:none}nav a[aria-current]{background:#2457d6;color:#fff}
.fields{display:grid;grid-template-columns:auto 1fr;gap:.5rem .75rem;align-items:center}label{font-weight:600}
input{padding:.5rem;border:1px solid #b8bfcc;border-radius:4px;font:inherit;font-family:ui-monospace,monospace}
button{padding:.5rem 1rem;border:0;border-radius:4px;font:inherit;cursor:pointer;margin-right:.5rem}.primary{background:#2457d6;color:#fff}.secondary{background:#e3e6ec}
#status{min-height:1.4em}.error{color:#8a1c1c}.ok{color:#1d5e2c}#chart{overflow:auto}#chart svg{max-width:100%;height:auto}
#chart g.node.active>path,#chart g.node.active>polygon,#chart g.node.active>ellipse{fill:#ffd866;stroke:#b7791f;stroke-width:2}
#chart g.cluster.active>path,#chart g.cluster.active>polygon{stroke:#b7791f;stroke-width:2}
table{border-collapse:collapse;width:100%;font-size:.9rem}th,td{text-align:left;padding:.3rem .5rem;border-bottom:1px solid #e3e6ec}td{font-family:ui-monospace,monospace}`;

/** Plain JavaScript, served as a file because the page's CSP forbids inline scripts. */
const APP_JS = `'use strict';
(() => {
  const $ = (id) => document.getElementById(id);
  const chart = $('chart'), key = $('api-key'), address = $('address'), status = $('status'), rows = $('transitions');
  let controller = null;
  const nodeId = (stateId) => 'state-' + encodeURIComponent(stateId);
  const say = (text, kind) => { status.textContent = text; status.className = kind || ''; };
  const describe = (v, prefix) => typeof v === 'string' ? [prefix ? prefix + '.' + v : v]
    : v && typeof v === 'object' ? Object.entries(v).flatMap(([k, s]) => describe(s, prefix ? prefix + '.' + k : k)) : [prefix];

  function highlight(ids) {
    const want = new Set(ids.map(nodeId));
    for (const el of chart.querySelectorAll('g.state')) el.classList.toggle('active', want.has(el.id));
  }

  async function showMachine(kind, credential) {
    if (chart.dataset.machine === kind) return;
    const res = await fetch('/v1/viz/machines/' + encodeURIComponent(kind), { headers: { authorization: 'Bearer ' + credential } });
    const body = await res.json();
    if (!res.ok) throw new Error(body.message || 'HTTP ' + res.status);
    // The SVG is Graphviz output of the platform's own machine definitions, with every label escaped by the server.
    chart.innerHTML = body.data.svg;
    chart.dataset.machine = kind;
    $('chart-title').textContent = kind;
  }

  function onFrame(frame) {
    highlight(frame.activeStateIds);
    const tr = document.createElement('tr');
    tr.className = frame.event ? 'transition' : 'current';
    if (frame.event) tr.dataset.event = frame.event.type;
    for (const text of [new Date(frame.at).toISOString().slice(11, 23), frame.event ? frame.event.type : '(current state)', describe(frame.value, '').join(', ')]) {
      const td = document.createElement('td');
      td.textContent = text;
      tr.append(td);
    }
    rows.append(tr);
  }

  async function watch() {
    stop();
    const credential = key.value.trim(), addr = address.value.trim();
    if (!credential || !addr) return say('Enter an API key and an actor address (kind/accountId/id).', 'error');
    const ctrl = new AbortController();
    controller = ctrl;
    rows.replaceChildren();
    say('Connecting...');
    try {
      const res = await fetch('/v1/viz/watch', {
        method: 'POST',
        headers: { authorization: 'Bearer ' + credential, 'content-type': 'application/json', accept: 'text/event-stream' },
        body: JSON.stringify({ address: addr }),
        signal: ctrl.signal,
      });
      if (!res.ok) {
        const body = await res.json().catch(() => null);
        return say((body && body.message) || 'HTTP ' + res.status, 'error');
      }
      await showMachine(addr.split('/')[0], credential);
      say('Watching ' + addr, 'ok');
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let end;
        while ((end = buffer.indexOf('\\n\\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = block.split('\\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).replace(/^ /, '')).join('\\n');
          if (data) onFrame(JSON.parse(data));
        }
      }
      if (controller === ctrl) say('The stream ended (the actor finished, or the node is shutting down).');
    } catch (err) {
      if (!ctrl.signal.aborted) say(String(err && err.message ? err.message : err), 'error');
    }
  }

  function stop() {
    if (!controller) return;
    controller.abort();
    controller = null;
    say('Stopped.');
  }

  $('watch').addEventListener('click', watch);
  $('stop').addEventListener('click', stop);
  address.addEventListener('keydown', (e) => { if (e.key === 'Enter') watch(); });
})();
`;

const sendViewer = (reply: FastifyReply, status: number, body: Html) =>
  sendPage(reply, status, 'Statechart viewer', body, { style: STYLE, csp: CSP, script: '/viz/app.js' });

function page(selected: string | null, svg: string | null, error?: string): Html {
  const links = statechartKinds().map((k) => html`<li><a href="/viz?machine=${encodeURIComponent(k)}" ${new Html(k === selected ? 'aria-current="page"' : '')}>${k}</a></li>`);
  return html`<h1>Statechart viewer</h1>
    <nav aria-label="Machines"><ul id="machines">${links}</ul></nav>
    ${error ? html`<p class="error" role="alert">${error}</p>` : ''}
    <section aria-labelledby="watch-title"><h2 id="watch-title">Watch a live actor</h2>
      <p>The key goes only into the Authorization header of the stream request; this page never stores it.</p>
      <div class="fields">
        <label for="api-key">API key</label><input id="api-key" type="password" autocomplete="off" spellcheck="false">
        <label for="address">Actor address</label><input id="address" autocomplete="off" spellcheck="false" placeholder="account/&lt;account id&gt;/&lt;account id&gt;">
      </div>
      <p><button id="watch" type="button" class="primary">Watch</button><button id="stop" type="button" class="secondary">Stop</button></p>
      <p id="status" role="status" aria-live="polite"></p>
    </section>
    <section aria-labelledby="chart-title"><h2 id="chart-title">${selected ?? 'Choose a machine above'}</h2>
      <div id="chart" data-machine="${selected ?? ''}">${new Html(svg ?? '')}</div>
    </section>
    <section aria-labelledby="transitions-title"><h2 id="transitions-title">Transitions</h2>
      <table><thead><tr><th>Time (UTC)</th><th>Event</th><th>State</th></tr></thead><tbody id="transitions"></tbody></table>
    </section>`;
}

/** Tenants see their own actors; platform actors (device sessions) are for the owners and admins of any account. */
function visibleTo(caller: Caller, accountId: string): boolean {
  if (accountId === PLATFORM_ACCOUNT) return caller.role === 'owner' || caller.role === 'admin';
  return accountId === caller.accountId;
}

function watchedAddress(address: string): { address: string; kind: string; accountId: string } {
  try {
    const { kind, accountId } = parseAddress(address);
    return { address, kind, accountId };
  } catch {
    throw new PlatformError('MGMT_INVALID_BODY', `invalid actor address ${JSON.stringify(address)}: expected kind/accountId/id`);
  }
}

export function viewerPage(app: ManagementApp, services: AuthServices & Pick<Services, 'actors' | 'bus'>, state: { draining: boolean }) {
  // The page and its script are for browsers, not part of the API's document.
  app.get('/viz', { schema: { hide: true } }, async (request, reply) => {
    const q = request.query as Record<string, unknown>;
    const selected = typeof q.machine === 'string' && q.machine !== '' ? q.machine : null;
    if (selected !== null && !isStatechartKind(selected)) {
      return sendViewer(reply, 404, page(null, null, `There is no machine called "${selected}".`));
    }
    const svg = selected ? inlineSvg((await renderStatechart(selected, 'svg'))!) : null;
    return sendViewer(reply, 200, page(selected, svg));
  });

  app.get('/viz/app.js', { schema: { hide: true } }, async (_request, reply) =>
    reply.header('content-type', 'text/javascript; charset=utf-8').header('cache-control', 'no-cache').header('x-content-type-options', 'nosniff').send(APP_JS),
  );

  app.get(
    '/v1/viz/machines/:kind',
    {
      onRequest: requireAuthority(services, 'read'),
      config: { malformedPath: 'MGMT_STATECHART_NOT_FOUND' },
      schema: {
        operationId: 'getStatechart',
        tags: ['viz'],
        summary: 'Draw a statechart',
        description: 'The SVG and Graphviz DOT of one of the platform\'s machines (read authority).',
        security: CREDENTIAL,
        params: MachinePath,
        response: { 200: Machine, ...errorResponses([400, 403, 404, 500, 503], BAD_PATH) },
      },
    },
    async (request) => {
      const { kind } = request.params;
      const [svg, dot] = await Promise.all([renderStatechart(kind, 'svg'), renderStatechart(kind, 'dot')]);
      return { data: { kind, svg: inlineSvg(svg!), dot: dot! } };
    },
  );

  app.post(
    '/v1/viz/watch',
    {
      onRequest: requireAuthority(services, 'read'),
      schema: {
        operationId: 'watchActor',
        tags: ['viz'],
        summary: 'Follow a live actor',
        description:
          'Server-Sent Events on the response: the current state first, then one frame per transition, until the actor reaches a final state (read authority). ' +
          'Actors of other accounts answer like missing ones; platform actors are visible to owners and admins.',
        security: CREDENTIAL,
        body: WatchRequest,
        response: {
          200: { description: 'The event stream.', content: { 'text/event-stream': { schema: WatchFrame } } },
          ...errorResponses([400, 403, 404, 413, 415, 500, 503], { 404: 'No such actor visible to the caller.' }),
        },
      },
    },
    async (request, reply) => {
      const { address, kind, accountId } = watchedAddress(request.body.address);
      // Another tenant's actor answers exactly like a missing one, so that addresses cannot be probed.
      if (!visibleTo(request.caller!, accountId) || !isStatechartKind(kind)) throw new PlatformError('MGMT_ACTOR_NOT_FOUND');

      // Watch before reading, so that no transition can fall between the read and the subscription; what arrives
      // before the first frame is written waits in `early`.
      let send: ((f: VizFrame, last: boolean) => void) | null = null;
      const early: [VizFrame, boolean][] = [];
      const unwatch = watchActor(services.bus, address, (t) => {
        // Frames carry the state value and the event type only: never the context or the event's payload.
        const f = vizFrame(kind, address, t.value, t.at, t.event);
        if (send) send(f, t.status === 'done');
        else early.push([f, t.status === 'done']);
      });
      let current;
      try {
        current = await services.actors.read(address);
      } catch (err) {
        unwatch();
        if (isPlatformError(err, 'PLT_ACTOR_NOT_FOUND') || isPlatformError(err, 'PLT_ACTOR_UNKNOWN_KIND')) throw new PlatformError('MGMT_ACTOR_NOT_FOUND');
        if (isPlatformError(err, 'PLT_ACTOR_UNAVAILABLE')) throw new PlatformError('MGMT_UNAVAILABLE', `the actor is not reachable right now: ${err.message}`);
        throw err;
      }
      if (!current) {
        unwatch();
        throw new PlatformError('MGMT_ACTOR_NOT_FOUND');
      }

      reply.hijack();
      const res = reply.raw;
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-store',
        'x-accel-buffering': 'no',
        'x-request-id': request.id,
      });
      let ticks = 0;
      const timer = setInterval(() => {
        // A graceful shutdown waits for open requests; a stream would hold it for the whole grace period.
        if (state.draining) return res.end();
        if ((ticks += 1000) % KEEPALIVE_MS === 0) res.write(': keep-alive\n\n');
      }, 1000);
      const finish = () => {
        clearInterval(timer);
        unwatch();
      };
      // Also when the client left while the actor was being read: its response has closed already and emits 'close'
      // no more, so a listener alone would keep the watch and the timer for good. `finished` calls back once either way.
      finished(res, finish);
      const write = (f: VizFrame, last: boolean) => {
        if (res.writableEnded) return;
        res.write(`data: ${JSON.stringify(f)}\n\n`);
        // A final state ends the actor: nothing more can happen at this address.
        if (last) res.end();
      };
      write(vizFrame(kind, address, current.value, services.clock.now()), false);
      for (const [f, last] of early.splice(0)) write(f, last);
      send = write;
      request.log.info({ address }, 'statechart watch opened');
      return reply;
    },
  );
}
