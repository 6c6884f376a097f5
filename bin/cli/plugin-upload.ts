import { createReadStream, statSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { Readable } from 'node:stream';
import { parseArgs } from 'node:util';
import { request } from 'undici';
import { apiUrl, credential } from './auth.ts';
import { cliAgent } from './http-agent.ts';
import { httpJson } from './http.ts';
import { CommandError, print, UsageError } from './output.ts';

/** What `POST /v1/capabilities/upload` answers (spec §2, plugin upload result). */
export interface Uploaded {
  capability_id: string;
  capability_name: string;
  version: number;
  files_processed: string[];
  schema_warnings?: unknown[];
}

/** How long an activation is followed (the transpiler's own limit is two minutes). */
const ACTIVATION_WAIT_MS = 150_000;

/** Follows the uploaded version until it is no longer activating: its status, and the reason when it failed. */
export async function activationOf(base: string, capabilityId: string, version: number): Promise<{ status: string; status_reason: string | null }> {
  const end = Date.now() + ACTIVATION_WAIT_MS;
  for (let wait = 100; ; wait = Math.min(wait * 2, 1_000)) {
    const res = await httpJson('GET', `${base}/v1/capabilities/${encodeURIComponent(capabilityId)}`, { headers: { authorization: `Bearer ${credential()}` } });
    if (res.status !== 200) throw new CommandError(res.json?.code ?? 'HTTP_ERROR', res.json?.message ?? `HTTP ${res.status}`);
    const v = (res.json.data.specifications.versions as { version_number: number; status: string; status_reason: string | null }[]).find((x) => x.version_number === version);
    if (v && v.status !== 'activating') return { status: v.status, status_reason: v.status_reason };
    if (Date.now() > end) return { status: 'activating', status_reason: null };
    if (process.stderr.isTTY) process.stderr.write(`\ractivating version ${version}...`);
    await new Promise((r) => setTimeout(r, wait));
  }
}

/** The outcome of an activation as the command's failure, when it is one. */
export function activationFailure(version: number, activation: { status: string; status_reason: string | null }): CommandError | null {
  if (activation.status === 'dormant') return new CommandError('ACTIVATION_FAILED', `version ${version} was not activated: ${activation.status_reason ?? 'unknown reason'}`);
  if (activation.status === 'activating') return new CommandError('ACTIVATION_PENDING', `version ${version} is still activating; see \`platform plugins list\``);
  return null;
}

/**
 * Streams an `.npack` to the upload route as multipart, so a progress line (on a terminal) follows what has actually
 * been sent; the API's error is the command's.
 */
export async function uploadArchive(base: string, file: string): Promise<Uploaded> {
  const size = statSync(file).size;
  const boundary = `----platform${randomBytes(12).toString('hex')}`;
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="archive"; filename="${path.basename(file).replace(/"/g, '')}"\r\nContent-Type: application/gzip\r\n\r\n`);
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  let sent = 0;
  async function* multipart(source: string) {
    yield head;
    for await (const chunk of createReadStream(source)) {
      sent += (chunk as Buffer).length;
      if (process.stderr.isTTY) process.stderr.write(`\ruploading ${path.basename(file)}: ${Math.floor((sent / size) * 100)}% of ${size} bytes`);
      yield chunk as Buffer;
    }
    yield tail;
  }
  const res = await request(`${base}/v1/capabilities/upload`, {
    method: 'POST',
    headers: { authorization: `Bearer ${credential()}`, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': String(head.length + size + tail.length) },
    body: Readable.from(multipart(file)),
    dispatcher: cliAgent,
  });
  if (process.stderr.isTTY) process.stderr.write('\n');
  const answer = (await res.body.json()) as { data?: Uploaded; code?: string; message?: string };
  if (res.statusCode !== 200 || !answer.data) throw new CommandError(answer.code ?? 'UPLOAD_FAILED', answer.message ?? `HTTP ${res.statusCode}`);
  return answer.data;
}

/**
 * `platform plugins upload <file.npack>`: uploads, then follows the version's own activation and prints its outcome
 * (exit 1 when it failed; `--no-wait` prints the upload result alone).
 */
export async function uploadCli(argv: string[]) {
  const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options: { 'api-url': { type: 'string' }, json: { type: 'boolean' }, 'no-wait': { type: 'boolean' } } });
  const file = positionals[0];
  if (!file || !file.endsWith('.npack') || positionals.length > 1) throw new UsageError('usage: platform plugins upload <file.npack>');
  const base = apiUrl(values['api-url']);
  const up = await uploadArchive(base, file);
  if (values['no-wait']) return print(up, Boolean(values.json));
  const activation = await activationOf(base, up.capability_id, up.version);
  if (process.stderr.isTTY) process.stderr.write('\n');
  print({ ...up, status: activation.status, ...(activation.status_reason ? { status_reason: activation.status_reason } : {}) }, Boolean(values.json));
  const failed = activationFailure(up.version, activation);
  if (failed) throw failed;
}
