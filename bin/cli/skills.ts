import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { request } from 'undici';
import { apiUrl, credential } from './auth.ts';
import { api, common, query } from './files.ts';
import { cliAgent } from './http-agent.ts';
import { multipartBody } from './http.ts';
import { CommandError, print, table, UsageError } from './output.ts';
import { SKILLS_USAGE } from './usage.ts';

/** The files of a folder (recursively), as the API takes them: base64, paths relative with `/`. */
function folderFiles(dir: string): { path: string; content_base64: string }[] {
  const out: { path: string; content_base64: string }[] = [];
  const walk = (at: string) => {
    for (const e of readdirSync(at, { withFileTypes: true })) {
      const full = path.join(at, e.name);
      if (e.isDirectory()) walk(full);
      else if (e.isFile()) out.push({ path: path.relative(dir, full).split(path.sep).join('/'), content_base64: readFileSync(full).toString('base64') });
    }
  };
  if (!statSync(dir, { throwIfNoEntry: false })?.isDirectory()) throw new CommandError('NOT_A_FOLDER', `${dir} is not a folder`);
  walk(dir);
  return out;
}

const named = (v: { name?: string | undefined; description?: string | undefined }) => ({ ...(v.name !== undefined ? { name: v.name } : {}), ...(v.description !== undefined ? { description: v.description } : {}) });
const summary = (s: { id: string; name: string; version: number; size: number; description: string }) => ({ id: s.id, name: s.name, version: s.version, size: s.size, description: s.description });

/** `platform skills ...` and `platform agents skills`. */
export async function skillsCli(argv: string[]) {
  const [verb, ...rest] = argv;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: { ...common, search: { type: 'string' }, limit: { type: 'string' }, offset: { type: 'string' }, dir: { type: 'string' }, name: { type: 'string' }, description: { type: 'string' }, agent: { type: 'string' }, file: { type: 'string' }, url: { type: 'string' }, purpose: { type: 'string' } },
  });
  const base = values['api-url'];
  const json = Boolean(values.json);
  const one = () => {
    if (positionals.length !== 1) throw new UsageError(`platform skills ${verb} takes one skill id\n${SKILLS_USAGE}`);
    return `/v1/skills/${encodeURIComponent(positionals[0]!)}`;
  };
  switch (verb) {
    case 'list': {
      const data = await api('GET', base, `/v1/skills${query({ search: values.search, limit: values.limit, offset: values.offset })}`);
      return json ? print(data, true) : process.stdout.write(table(data.skills.map(summary), ['id', 'name', 'version', 'size', 'description']));
    }
    case 'show':
      return print(await api('GET', base, one()), json);
    case 'create':
      if (!values.dir) throw new UsageError(`platform skills create needs --dir\n${SKILLS_USAGE}`);
      return print(await api('POST', base, '/v1/skills', { files: folderFiles(values.dir), ...named(values) }), json);
    case 'update':
      return print(await api('PATCH', base, one(), { ...named(values), ...(values.dir ? { files: folderFiles(values.dir) } : {}) }), json);
    case 'delete':
      await api('DELETE', base, one());
      return print({ deleted: positionals[0] }, json);
    case 'content': {
      const data = await api('GET', base, `${one()}/content`);
      return json ? print(data, true) : process.stdout.write(table(data.files, ['path', 'size']));
    }
    case 'bind':
    case 'unbind':
      if (!values.agent) throw new UsageError(`platform skills ${verb} needs --agent\n${SKILLS_USAGE}`);
      return print(await api(verb === 'bind' ? 'PUT' : 'DELETE', base, `${one()}/bindings/${encodeURIComponent(values.agent)}`), json);
    case 'import': {
      if ((values.file === undefined) === (values.url === undefined)) throw new UsageError(`platform skills import needs --file or --url\n${SKILLS_USAGE}`);
      if (values.url !== undefined) return print(await api('POST', base, '/v1/skills/import-url', { url: values.url, ...named(values) }), json);
      const form = multipartBody(named(values), { field: 'archive', filename: path.basename(values.file!), bytes: readFileSync(values.file!) });
      const res = await request(`${apiUrl(base)}/v1/skills/import`, { method: 'POST', headers: { authorization: `Bearer ${credential()}`, 'content-type': form.contentType }, body: form.body, dispatcher: cliAgent });
      const body = (await res.body.json().catch(() => ({}))) as { data?: unknown; code?: string; message?: string };
      if (res.statusCode !== 201) throw new CommandError(body.code ?? 'HTTP_ERROR', body.message ?? `HTTP ${res.statusCode}`);
      return print(body.data, json);
    }
    case 'generate':
      if (!values.agent || !values.name || !values.purpose) throw new UsageError(`platform skills generate needs --agent, --name and --purpose\n${SKILLS_USAGE}`);
      return print(await api('POST', base, '/v1/skills/generate', { agent_id: values.agent, name: values.name, purpose: values.purpose, ...(values.description !== undefined ? { description: values.description } : {}) }), json);
    default:
      throw new UsageError(`platform skills: expected list, show, create, update, delete, content, bind, unbind, import or generate\n${SKILLS_USAGE}`);
  }
}

/** `platform agents skills <agent-id>`. */
export async function agentSkillsCli(argv: string[]) {
  const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options: common });
  if (positionals.length !== 1) throw new UsageError(`platform agents skills takes an agent id\n${SKILLS_USAGE}`);
  const data = await api('GET', values['api-url'], `/v1/agents/${encodeURIComponent(positionals[0]!)}/skills`);
  return values.json ? print(data, true) : process.stdout.write(table(data.skills.map(summary), ['id', 'name', 'version', 'size', 'description']));
}
