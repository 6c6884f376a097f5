import { parseArgs } from 'node:util';
import { apiUrl, credential } from './auth.ts';
import { httpJson } from './http.ts';
import { CommandError, print, table, UsageError } from './output.ts';
import { PLUGINS_USAGE } from './usage.ts';


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

/**
 * `platform plugins <verb>`. Each verb's module is loaded when it runs: building loads componentize-js or wasm-tools,
 * packing the archive writer, and `list` neither.
 */
export async function pluginsCli(argv: string[]) {
  const [verb, ...rest] = argv;
  switch (verb) {
    case 'init':
      return (await import('./plugin-init.ts')).initCli(rest);
    case 'build':
      return (await import('./plugin-build.ts')).buildCli(rest);
    case 'pack':
      return (await import('./plugin-pack.ts')).packCli(rest);
    case 'upload':
      return (await import('./plugin-upload.ts')).uploadCli(rest);
    case 'deploy':
      return (await import('./plugin-deploy.ts')).deployCli(rest);
    case 'list':
      return listCli(rest);
    case 'activate':
      return activateCli(rest);
    default:
      throw new UsageError(`platform plugins: expected init, build, pack, upload, deploy, list or activate\n${PLUGINS_USAGE}`);
  }
}
