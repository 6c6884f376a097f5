import { parseArgs } from 'node:util';
import { apiUrl, credential } from './auth.ts';
import { httpJson } from './http.ts';
import { CommandError, print, table } from './output.ts';

export async function capabilitiesCli(argv: string[]) {
  const [verb, ...rest] = argv;
  if (verb !== 'list') throw new CommandError('USAGE', 'usage: platform capabilities list [--type t] [--namespace n] [--search s] [--limit n] [--offset n] [--json]');
  const { values } = parseArgs({
    args: rest,
    options: {
      type: { type: 'string' },
      namespace: { type: 'string' },
      search: { type: 'string' },
      limit: { type: 'string' },
      offset: { type: 'string' },
      'api-url': { type: 'string' },
      json: { type: 'boolean' },
    },
  });
  const q = new URLSearchParams();
  for (const k of ['type', 'namespace', 'search', 'limit', 'offset'] as const) if (values[k] !== undefined) q.set(k, values[k]!);
  const res = await httpJson('GET', `${apiUrl(values['api-url'])}/v1/capabilities?${q}`, { headers: { authorization: `Bearer ${credential()}` } });
  if (res.status !== 200) throw new CommandError(res.json?.code ?? 'HTTP_ERROR', res.json?.message ?? `HTTP ${res.status}`);
  const data = res.json.data as { capabilities: Record<string, unknown>[]; total: number; limit: number; offset: number };
  if (values.json) return print(data, true);
  process.stdout.write(table(data.capabilities, ['namespace', 'name', 'type', 'active_version', 'is_active', 'id']));
  process.stdout.write(`${data.capabilities.length} of ${data.total} (offset ${data.offset})\n`);
}
