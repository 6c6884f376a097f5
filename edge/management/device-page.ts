import { verifyPassword, type Services } from '../../runtime/index.ts';
import { html, sendPage, type Html } from '../http/index.ts';
import type { ManagementApp } from './schemas.ts';

const TICKET = 'device-consent';

/**
 * The form's text fields; one that is not text, or holds a NUL, counts as not sent (the page asks again). A page
 * answers in HTML whatever it is sent, so its fields are read here rather than refused by a schema.
 */
function form(fields: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(fields ?? {})) if (typeof v === 'string' && !v.includes('\0') && v.length <= 4096) out[k] = v;
  return out;
}

function signInForm(userCode: string, error?: string): Html {
  return html`<h1>Connect a device</h1>
    <p>Enter the code shown on your device, then sign in to approve or deny it.</p>
    ${error ? html`<p class="error" role="alert">${error}</p>` : ''}
    <form method="post" action="/device">
      <label for="user_code">Code</label><input id="user_code" name="user_code" class="code" autocomplete="off" required value="${userCode}">
      <label for="email">Email</label><input id="email" name="email" type="email" autocomplete="username" required>
      <label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
      <button class="primary" type="submit" id="sign-in">Sign in</button>
    </form>`;
}

/**
 * The device-flow verification page. Sign-in state is carried by a short-lived signed ticket in a hidden field, not
 * a cookie: no surface of the platform reads cookies. Pages are for browsers, not part of the API's document.
 */
export function devicePage(app: ManagementApp, services: Pick<Services, 'deviceFlow' | 'signer' | 'store'>) {
  const { deviceFlow, signer, store } = services;
  const page = { schema: { hide: true } };

  app.get('/device', page, async (request, reply) => {
    const q = request.query as Record<string, unknown>;
    return sendPage(reply, 200, 'Connect a device', signInForm(typeof q.user_code === 'string' ? q.user_code : ''));
  });

  app.post('/device', page, async (request, reply) => {
    const f = form(request.body as Record<string, string>);
    const typed = f.user_code ?? '';
    const session = typed ? await deviceFlow.lookup(typed) : null;
    if (!session || session.state !== 'pending') {
      return sendPage(reply, 400, 'Connect a device', signInForm(typed, 'That code is unknown, expired or already used. Start again on your device.'));
    }
    const user = f.email ? await store.principals.findUserByEmail(f.email) : null;
    const valid = await verifyPassword(f.password ?? '', user?.passwordHash ?? null);
    if (!user || !valid || user.status !== 'active' || user.role === null) {
      return sendPage(reply, 401, 'Connect a device', signInForm(session.userCode, 'Wrong email or password.'));
    }
    const account = await store.accounts.get(user.accountId);
    const ticket = await signer.signTicket(TICKET, { session: session.id, user: user.id, account: user.accountId });
    return sendPage(
      reply,
      200,
      'Approve device',
      html`<h1>Approve this device?</h1>
        <p>The application <strong id="client-id">${session.clientId}</strong> asks to act as <strong>${user.email ?? user.name}</strong>
        in the account <strong>${account?.name ?? user.accountId}</strong>, with your role (${user.role}).</p>
        <p>Check that your device shows this code:</p><p class="code" id="user-code">${session.userCode}</p>
        <form method="post" action="/device/decision">
          <input type="hidden" name="ticket" value="${ticket}">
          <button class="primary" type="submit" name="decision" value="approve" id="approve">Approve</button>
          <button class="secondary" type="submit" name="decision" value="deny" id="deny">Deny</button>
        </form>`,
    );
  });

  app.post('/device/decision', page, async (request, reply) => {
    const f = form(request.body as Record<string, string>);
    const ticket = f.ticket ? await signer.verifyTicket(TICKET, f.ticket) : null;
    if (!ticket || (f.decision !== 'approve' && f.decision !== 'deny')) {
      return sendPage(reply, 400, 'Connect a device', signInForm('', 'That sign-in has expired. Enter the code again.'));
    }
    const approve = f.decision === 'approve';
    const recorded = await deviceFlow.decide(ticket.session!, { userId: ticket.user!, accountId: ticket.account! }, approve);
    if (!recorded) {
      return sendPage(reply, 409, 'Connect a device', signInForm('', 'This request was already decided or has expired. Start again on your device.'));
    }
    return sendPage(
      reply,
      200,
      approve ? 'Device approved' : 'Device denied',
      approve
        ? html`<h1>Device approved</h1><p class="ok" id="result">Approved. You can return to your device.</p>`
        : html`<h1>Device denied</h1><p class="error" id="result">Denied. The device will not get access.</p>`,
    );
  });
}
