import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { decodeJwt } from 'jose';
import { loadConfig, urls } from '../../runtime/core/config/index.ts';
import { loadLogin, removeLogin, saveLogin } from './credentials.ts';
import { httpJson } from './http.ts';
import { CommandError, print } from './output.ts';

const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

/** The management API base URL: --api-url, then PLATFORM_API_URL, then the stored login, then this machine's config. */
export function apiUrl(flag?: string): string {
  const url = flag ?? process.env.PLATFORM_API_URL ?? loadLogin()?.api_url ?? urls(loadConfig()).api;
  return url.replace(/\/+$/, '');
}

/** The credential for API calls: PLATFORM_API_KEY, else the stored login's token. */
export function credential(): string {
  const key = process.env.PLATFORM_API_KEY;
  if (key) return key;
  const login = loadLogin();
  if (!login) throw new CommandError('NOT_LOGGED_IN', 'not logged in: run `platform login` or set PLATFORM_API_KEY');
  return login.access_token;
}

export async function loginCli(argv: string[]) {
  const { values } = parseArgs({ args: argv, options: { 'api-url': { type: 'string' }, 'max-attempts': { type: 'string' }, json: { type: 'boolean' } } });
  const base = apiUrl(values['api-url']);
  const cfg = await httpJson('GET', `${base}/v1/platform-cli/config`);
  if (cfg.status !== 200) throw new CommandError('CONFIG_UNAVAILABLE', `could not read ${base}/v1/platform-cli/config (HTTP ${cfg.status})`);
  const { client_id, device_authorization_endpoint, token_endpoint } = cfg.json.data as Record<string, string>;
  const start = await httpJson('POST', device_authorization_endpoint!, { json: { client_id } });
  if (start.status !== 200) throw new CommandError('DEVICE_AUTHORIZE_FAILED', `device authorization failed (HTTP ${start.status}): ${start.text}`);
  const { device_code, user_code, verification_uri, interval, expires_in } = start.json as Record<string, any>;
  process.stderr.write(`Open ${verification_uri} and enter the code ${user_code}\n(or open ${verification_uri}?user_code=${encodeURIComponent(user_code)})\nWaiting for approval...\n`);
  // Poll at the server's interval, no longer than the code lives (a pending 400 looks like an expired one).
  const intervalMs = Math.max(1, Number(interval) || 5) * 1000;
  const limit = values['max-attempts'] ? Number(values['max-attempts']) : Math.ceil((Number(expires_in) || 600) * 1000 / intervalMs) + 1;
  for (let attempt = 1; attempt <= limit; attempt++) {
    await sleep(intervalMs);
    const res = await httpJson('POST', token_endpoint!, { json: { grant_type: DEVICE_GRANT, code: device_code, client_id } });
    if (res.status === 200) {
      const claims = decodeJwt(res.json.access_token);
      const file = saveLogin({
        api_url: base,
        client_id: client_id!,
        access_token: res.json.access_token,
        expires_at: new Date(Number(claims.exp) * 1000).toISOString(),
      });
      process.stderr.write(`Logged in. Token stored in ${file} (valid one hour).\n`);
      if (values.json) print({ user_id: claims.sub, account_id: claims.account_id, expires_at: new Date(Number(claims.exp) * 1000).toISOString() }, true);
      return;
    }
    if (res.status === 403) throw new CommandError('ACCESS_DENIED', 'the request was denied in the browser');
    if (res.status !== 400) throw new CommandError('TOKEN_FAILED', `token endpoint answered HTTP ${res.status}: ${res.text}`);
  }
  throw new CommandError('LOGIN_TIMEOUT', `no approval after ${limit} attempts; run \`platform login\` again`);
}

export async function logoutCli(argv: string[]) {
  const { values } = parseArgs({ args: argv, options: { json: { type: 'boolean' } } });
  const removed = removeLogin();
  print(values.json ? { logged_out: removed } : removed ? 'Logged out.' : 'Not logged in.', Boolean(values.json));
}

export async function whoamiCli(argv: string[]) {
  const { values } = parseArgs({ args: argv, options: { json: { type: 'boolean' } } });
  const login = loadLogin();
  if (!login) throw new CommandError('NOT_LOGGED_IN', 'not logged in: run `platform login`');
  const claims = decodeJwt(login.access_token);
  // The token is checked by the server, not trusted locally: a probe call says whether it is still accepted.
  const probe = await httpJson('GET', `${login.api_url}/v1/capabilities?limit=1`, { headers: { authorization: `Bearer ${login.access_token}` } });
  print(
    {
      user_id: claims.sub,
      account_id: claims.account_id,
      client_id: claims.aud,
      api_url: login.api_url,
      expires_at: login.expires_at,
      valid: probe.status === 200,
      ...(probe.status === 200 ? {} : { reason: probe.json?.message ?? `HTTP ${probe.status}` }),
    },
    Boolean(values.json),
  );
}
