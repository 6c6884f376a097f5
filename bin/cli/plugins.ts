import { createReadStream, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { request } from 'undici';
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { writeNpack } from '../../runtime/index.ts';
import { apiUrl, credential } from './auth.ts';
import { cliAgent, httpJson } from './http.ts';
import { CommandError, print, table, UsageError } from './output.ts';

const PACKED = /(\.wasm|\.wit)$|^(platform\.ya?ml|\.env|env)$/;

/** `platform plugins pack <dir>`: a .npack of the entries the platform reads (component, config, WIT, env). */
async function packCli(argv: string[]) {
  const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options: { out: { type: 'string' }, json: { type: 'boolean' } } });
  const dir = positionals[0];
  if (!dir) throw new UsageError('usage: platform plugins pack <dir> [--out file.npack]');
  const files = readdirSync(dir).filter((f) => PACKED.test(f) && statSync(path.join(dir, f)).isFile()).sort();
  if (!files.some((f) => f.endsWith('.wasm'))) throw new CommandError('NO_COMPONENT', `${dir} has no *.wasm component`);
  const archive = await writeNpack(files.map((f) => ({ name: f, bytes: readFileSync(path.join(dir, f)) })));
  const out = values.out ?? `${path.basename(path.resolve(dir))}.npack`;
  writeFileSync(out, archive);
  print(values.json ? { file: out, bytes: archive.length, entries: files } : `${out}: ${files.join(', ')} (${archive.length} bytes)`, Boolean(values.json));
}

/** How long `plugins upload` follows an activation (the transpiler's own limit is two minutes). */
const ACTIVATION_WAIT_MS = 150_000;

/** Follows the uploaded version until it is no longer activating: its status, and the reason when it failed. */
async function activationOf(base: string, capabilityId: string, version: number): Promise<{ status: string; status_reason: string | null }> {
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

/**
 * `platform plugins upload <file.npack>`: streams the archive with a progress line, then follows the version's own
 * activation and prints its outcome (exit 1 when it failed; `--no-wait` prints the upload result alone).
 */
async function uploadCli(argv: string[]) {
  const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options: { 'api-url': { type: 'string' }, json: { type: 'boolean' }, 'no-wait': { type: 'boolean' } } });
  const given = positionals[0];
  if (!given || !given.endsWith('.npack')) throw new UsageError('usage: platform plugins upload <file.npack>');
  const file: string = given;
  const size = statSync(file).size;
  const boundary = `----platform${randomBytes(12).toString('hex')}`;
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="archive"; filename="${path.basename(file).replace(/"/g, '')}"\r\nContent-Type: application/gzip\r\n\r\n`);
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  let sent = 0;
  // The multipart body is streamed from the file, so the progress line follows what has actually been sent.
  async function* multipart(source: string) {
    yield head;
    for await (const chunk of createReadStream(source)) {
      sent += (chunk as Buffer).length;
      if (process.stderr.isTTY) process.stderr.write(`\ruploading ${path.basename(file)}: ${Math.floor((sent / size) * 100)}% of ${size} bytes`);
      yield chunk as Buffer;
    }
    yield tail;
  }
  const res = await request(`${apiUrl(values['api-url'])}/v1/capabilities/upload`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${credential()}`,
      'content-type': `multipart/form-data; boundary=${boundary}`,
      'content-length': String(head.length + size + tail.length),
    },
    body: Readable.from(multipart(file)),
    dispatcher: cliAgent,
  });
  if (process.stderr.isTTY) process.stderr.write('\n');
  const answer = (await res.body.json()) as { data?: { capability_id: string; version: number }; code?: string; message?: string };
  if (res.statusCode !== 200 || !answer.data) throw new CommandError(answer.code ?? 'UPLOAD_FAILED', answer.message ?? `HTTP ${res.statusCode}`);
  if (values['no-wait']) return print(answer.data, Boolean(values.json));
  const activation = await activationOf(apiUrl(values['api-url']), answer.data.capability_id, answer.data.version);
  if (process.stderr.isTTY) process.stderr.write('\n');
  print({ ...answer.data, status: activation.status, ...(activation.status_reason ? { status_reason: activation.status_reason } : {}) }, Boolean(values.json));
  if (activation.status === 'dormant') throw new CommandError('ACTIVATION_FAILED', `version ${answer.data.version} was not activated: ${activation.status_reason ?? 'unknown reason'}`);
  if (activation.status === 'activating') throw new CommandError('ACTIVATION_PENDING', `version ${answer.data.version} is still activating; see \`platform plugins list\``);
}

async function listCli(argv: string[]) {
  const { values } = parseArgs({ args: argv, options: { 'api-url': { type: 'string' }, json: { type: 'boolean' } } });
  const res = await httpJson('GET', `${apiUrl(values['api-url'])}/v1/capabilities?type=plugin&limit=100`, { headers: { authorization: `Bearer ${credential()}` } });
  if (res.status !== 200) throw new CommandError(res.json?.code ?? 'HTTP_ERROR', res.json?.message ?? `HTTP ${res.status}`);
  const caps = res.json.data.capabilities as { id: string; name: string; namespace: string; active_version: number; specifications: { versions: { version_number: number; tools: unknown[] }[] } }[];
  if (values.json) return print(caps, true);
  process.stdout.write(
    table(caps.map((c) => ({ namespace: c.namespace, name: c.name, active: c.active_version, versions: c.specifications.versions.length, tools: c.specifications.versions.at(-1)?.tools.length ?? 0, id: c.id }))),
  );
}

async function activateCli(argv: string[]) {
  const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options: { 'api-url': { type: 'string' }, json: { type: 'boolean' } } });
  const [id, version] = positionals;
  if (!id || !version) throw new UsageError('usage: platform plugins activate <capability-id> <version>');
  const res = await httpJson('POST', `${apiUrl(values['api-url'])}/v1/capabilities/${encodeURIComponent(id)}/versions/${encodeURIComponent(version)}/activate`, { headers: { authorization: `Bearer ${credential()}` } });
  if (res.status !== 200) throw new CommandError(res.json?.code ?? 'HTTP_ERROR', res.json?.message ?? `HTTP ${res.status}`);
  print(res.json.data, Boolean(values.json));
}

export async function pluginsCli(argv: string[]) {
  const [verb, ...rest] = argv;
  if (verb === 'pack') return packCli(rest);
  if (verb === 'upload') return uploadCli(rest);
  if (verb === 'list') return listCli(rest);
  if (verb === 'activate') return activateCli(rest);
  throw new UsageError('usage: platform plugins pack <dir> | upload <file.npack> | list | activate <capability-id> <version>');
}
