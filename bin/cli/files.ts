import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { request } from 'undici';
import { apiUrl, credential } from './auth.ts';
import { cliAgent } from './http-agent.ts';
import { httpJson } from './http.ts';
import { CommandError, print, printPage, table, UsageError } from './output.ts';
import { FILES_USAGE } from './usage.ts';

export const common = { 'api-url': { type: 'string' }, json: { type: 'boolean' } } as const;
const auth = () => ({ authorization: `Bearer ${credential()}` });

/** One management API call; its `data`, or the API's error as the command's. */
export async function api(method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE', base: string | undefined, path: string, json?: unknown) {
  const res = await httpJson(method, `${apiUrl(base)}${path}`, { headers: auth(), ...(json !== undefined ? { json } : {}) });
  if (res.status !== 200 && res.status !== 201 && res.status !== 204) throw new CommandError(res.json?.code ?? 'HTTP_ERROR', res.json?.message ?? `HTTP ${res.status}`);
  return res.status === 204 ? null : res.json.data;
}

/** Bytes from the API (following one redirect, to the presigned URL), to a file or standard output. */
async function download(base: string | undefined, path: string, out: string | undefined) {
  let url = `${apiUrl(base)}${path}`;
  let headers: Record<string, string> = auth();
  for (let hop = 0; hop < 2; hop++) {
    const res = await request(url, { headers, dispatcher: cliAgent });
    if (res.statusCode === 302 && typeof res.headers.location === 'string') {
      await res.body.dump();
      // The presigned URL is its own authority: the credential is not sent along.
      url = new URL(res.headers.location, url).toString();
      headers = {};
      continue;
    }
    const bytes = Buffer.from(await res.body.arrayBuffer());
    if (res.statusCode !== 200) {
      const err = JSON.parse(bytes.toString('utf8') || '{}') as { code?: string; message?: string };
      throw new CommandError(err.code ?? 'HTTP_ERROR', err.message ?? `HTTP ${res.statusCode}`);
    }
    if (out) writeFileSync(out, bytes);
    else process.stdout.write(bytes);
    return;
  }
  throw new CommandError('HTTP_ERROR', 'too many redirects');
}

export const query = (pairs: Record<string, string | undefined>) => {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(pairs)) if (v !== undefined) q.set(k, v);
  const s = q.toString();
  return s ? `?${s}` : '';
};

/** `platform attachments list|quota|url`. */
export async function attachmentsCli(argv: string[]) {
  const [verb, ...rest] = argv;
  const { values, positionals } = parseArgs({ args: rest, allowPositionals: true, options: { ...common, task: { type: 'string' }, context: { type: 'string' }, limit: { type: 'string' }, cursor: { type: 'string' }, 'expires-in': { type: 'string' } } });
  const base = values['api-url'];
  if (verb === 'list') {
    const data = await api('GET', base, `/v1/attachments${query({ task_id: values.task, context_id: values.context, limit: values.limit, cursor: values.cursor })}`);
    return printPage(data, data.attachments, ['id', 'created_at', 'filename', 'media_type', 'size', 'task_id', 'owner_id'], Boolean(values.json));
    return;
  }
  if (verb === 'quota') return print(await api('GET', base, '/v1/attachments/quota'), Boolean(values.json));
  if (verb === 'url') {
    if (positionals.length !== 1) throw new UsageError(`platform attachments url takes one attachment id\n${FILES_USAGE}`);
    const body = values['expires-in'] !== undefined ? { expires_in: Number(values['expires-in']) } : {};
    return print(await api('POST', base, `/v1/attachments/${encodeURIComponent(positionals[0]!)}/url`, body), Boolean(values.json));
  }
  throw new UsageError(`platform attachments: expected list, quota or url\n${FILES_USAGE}`);
}

/** `platform files get`. */
export async function filesCli(argv: string[]) {
  const [verb, ...rest] = argv;
  const { values, positionals } = parseArgs({ args: rest, allowPositionals: true, options: { 'api-url': { type: 'string' }, out: { type: 'string' } } });
  if (verb !== 'get' || positionals.length !== 1) throw new UsageError(`platform files: expected get <id>\n${FILES_USAGE}`);
  return download(values['api-url'], `/v1/files/${encodeURIComponent(positionals[0]!)}`, values.out);
}

/** `platform agents files|cat|quota|journal|journal-delete`: an agent's home directory and journal. */
export async function agentHomeCli(argv: string[]) {
  const [verb, ...rest] = argv;
  const text = { type: 'string' } as const;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: { ...common, path: text, principal: text, out: text, thread: text, kind: text, query: text, since: text, until: text, limit: text, cursor: text },
  });
  const two = verb === 'cat' || verb === 'journal-delete';
  if (positionals.length !== (two ? 2 : 1)) throw new UsageError(`platform agents ${verb} takes ${verb === 'cat' ? 'an agent id and a path' : verb === 'journal-delete' ? 'an agent id and an entry id' : 'an agent id'}\n${FILES_USAGE}`);
  const agent = `/v1/agents/${encodeURIComponent(positionals[0]!)}`;
  const base = values['api-url'];
  if (verb === 'journal') {
    const q = { principal_id: values.principal, context_id: values.thread, kind: values.kind, q: values.query, since: values.since, until: values.until, limit: values.limit, cursor: values.cursor };
    const data = await api('GET', base, `${agent}/journal${query(q)}`);
    const rows = data.entries.map((e: { content: string }) => ({ ...e, content: e.content.length > 80 ? `${e.content.slice(0, 77)}...` : e.content }));
    return printPage(data, rows, ['created_at', 'kind', 'context_id', 'id', 'content'], Boolean(values.json));
    return;
  }
  if (verb === 'journal-delete') {
    await api('DELETE', base, `${agent}/journal/${encodeURIComponent(positionals[1]!)}${query({ principal_id: values.principal })}`);
    process.stdout.write(`removed journal entry ${positionals[1]}\n`);
    return;
  }
  if (verb === 'files') {
    const data = await api('GET', base, `${agent}/files${query({ path: values.path, principal_id: values.principal })}`);
    if (values.json) return print(data, true);
    process.stdout.write(table(data.entries, ['type', 'size', 'modified_at', 'name']));
    if (data.truncated) process.stdout.write('(more entries than shown)\n');
    return;
  }
  if (verb === 'cat') return download(base, `${agent}/files/content${query({ path: positionals[1], principal_id: values.principal })}`, values.out);
  return print(await api('GET', base, `${agent}/quota${query({ principal_id: values.principal })}`), Boolean(values.json));
}

/** `platform identity link-code|verify|links`. */
export async function identityCli(argv: string[]) {
  const [verb, ...rest] = argv;
  const { values, positionals } = parseArgs({ args: rest, allowPositionals: true, options: { ...common, provider: { type: 'string' }, 'external-id': { type: 'string' }, 'display-name': { type: 'string' }, principal: { type: 'string' } } });
  const base = values['api-url'];
  if (verb === 'link-code') {
    if (!values.provider || !values['external-id']) throw new UsageError(`platform identity link-code needs --provider and --external-id\n${FILES_USAGE}`);
    const body = { provider: values.provider, external_id: values['external-id'], ...(values['display-name'] !== undefined ? { display_name: values['display-name'] } : {}) };
    return print(await api('POST', base, '/v1/identity/link-codes', body), Boolean(values.json));
  }
  if (verb === 'verify') {
    if (positionals.length !== 1) throw new UsageError(`platform identity verify takes the link code\n${FILES_USAGE}`);
    return print(await api('POST', base, '/v1/identity/verify', { code: positionals[0] }), Boolean(values.json));
  }
  if (verb === 'links') {
    const data = await api('GET', base, `/v1/identity/links${query({ provider: values.provider, external_id: values['external-id'], principal_id: values.principal })}`);
    return values.json ? print(data, true) : process.stdout.write(table(data.links, ['provider', 'external_id', 'principal_id', 'display_name', 'linked_at']));
  }
  throw new UsageError(`platform identity: expected link-code, verify or links\n${FILES_USAGE}`);
}
