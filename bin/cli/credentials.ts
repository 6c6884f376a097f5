import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** What `platform login` stores: the access token and where it works. */
export interface StoredLogin {
  api_url: string;
  client_id: string;
  access_token: string;
  expires_at: string;
}

export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.PLATFORM_CONFIG_DIR) return path.resolve(env.PLATFORM_CONFIG_DIR);
  const base = env.XDG_CONFIG_HOME ? path.resolve(env.XDG_CONFIG_HOME) : path.join(os.homedir(), '.config');
  return path.join(base, 'platform');
}

const file = (env?: NodeJS.ProcessEnv) => path.join(configDir(env), 'credentials.json');

export function saveLogin(login: StoredLogin, env?: NodeJS.ProcessEnv): string {
  const dir = configDir(env);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const f = file(env);
  writeFileSync(f, `${JSON.stringify(login, null, 2)}\n`, { mode: 0o600 });
  // writeFileSync keeps the mode of an existing file: make sure a token never sits in a readable file.
  chmodSync(f, 0o600);
  return f;
}

export function loadLogin(env?: NodeJS.ProcessEnv): StoredLogin | null {
  try {
    return JSON.parse(readFileSync(file(env), 'utf8')) as StoredLogin;
  } catch {
    return null;
  }
}

export function removeLogin(env?: NodeJS.ProcessEnv): boolean {
  const f = file(env);
  try {
    readFileSync(f);
  } catch {
    return false;
  }
  rmSync(f, { force: true });
  return true;
}
