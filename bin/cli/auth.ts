import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig, urls } from '../../runtime/core/config/index.ts';
import { readNodeFile } from '../data-dir.ts';
import { loadLogin, removeLogin, saveLogin } from './credentials.ts';
import { httpJson } from './http.ts';
import { CommandError, print } from './output.ts';

const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

/** jose is loaded by the two commands that read a token's claims only: every other command starts ~70 ms sooner. */
const decodeJwt = async (token: string) => (await import('jose')).decodeJwt(token);

/**
 * The management API base URL: --api-url, then PLATFORM_API_URL, then where the stored login was made, then the node
 * running on this machine's data directory (its node.json names its URL, whatever port it took), then what this
 * machine's settings say.
 */
export function apiUrl(flag?: string): string {
  const url = flag ?? process.env.PLATFORM_API_URL ?? loadLogin()?.api_url ?? runningNodeUrl() ?? urls(loadConfig()).api;
  return url.replace(/\/+$/, '');
}

/**
 * The origin of a gateway (`mcp-{handle}` or `agent-{handle}`) on the node the management API URL names: the hosts of
 * one node differ only in their first label (`api.<domain>`), so the port a node took is kept.
 */
export function gatewayUrl(kind: 'mcp' | 'agent', handle: string, apiFlag?: string): string {
  const u = new URL(apiUrl(apiFlag));
  if (!u.hostname.startsWith('api.')) return kind === 'mcp' ? urls(loadConfig()).mcp(handle) : urls(loadConfig()).agent(handle);
  u.hostname = `${kind}-${handle}.${u.hostname.slice('api.'.length)}`;
  return u.origin;
}

/**
 * The node of this machine's data directory; with PLATFORM_DATA_DIR unset, also the one `npm start` keeps in this
 * checkout (the default directory is relative to where the node started, the CLI may run anywhere).
 */
function runningNodeUrl(): string | undefined {
  const config = loadConfig();
  const here = readNodeFile(config.dataDir)?.api_url;
  if (here || process.env.PLATFORM_DATA_DIR) return here;
  return readNodeFile(fileURLToPath(new URL('../../.platform', import.meta.url)))?.api_url;
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
      const claims = await decodeJwt(res.json.access_token);
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
  const { values } = parseArgs({ args: argv, options: { json: { type: 'boolean' }, 'api-url': { type: 'string' } } });
  const key = process.env.PLATFORM_API_KEY;
  if (key) {
    // An API key names no one by itself (it is a secret, not a token with claims): the server says whether it works.
    const base = apiUrl(values['api-url']);
    const probe = await httpJson('GET', `${base}/v1/capabilities?limit=1`, { headers: { authorization: `Bearer ${key}` } });
    print(
      {
        credential: 'api_key (PLATFORM_API_KEY)',
        key: `${key.slice(0, 6)}…`,
        api_url: base,
        valid: probe.status === 200,
        ...(probe.status === 200 ? {} : { reason: probe.json?.message ?? `HTTP ${probe.status}` }),
      },
      Boolean(values.json),
    );
    return;
  }
  const login = loadLogin();
  if (!login) throw new CommandError('NOT_LOGGED_IN', 'not logged in: run `platform login`, or set PLATFORM_API_KEY');
  const claims = await decodeJwt(login.access_token);
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
