import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { apiUrl, credential } from './auth.ts';
import { httpJson, type HttpResult } from './http.ts';
import { CommandError, print, printPage, table, UsageError } from './output.ts';
import { AUTONOMY_USAGE } from './usage.ts';

const auth = () => ({ authorization: `Bearer ${credential()}` });

function answer(res: HttpResult) {
  if (res.status !== 200) throw new CommandError(res.json?.code ?? 'HTTP_ERROR', res.json?.message ?? `HTTP ${res.status}`);
  return res.json.data;
}

/** The policy path of the scope the flags name. */
function policyPath(values: { agent?: string; user?: string }): string {
  if (values.agent !== undefined && values.user !== undefined) throw new UsageError(`give --agent or --user, not both\n${AUTONOMY_USAGE}`);
  if (values.agent !== undefined) return `/v1/agents/${encodeURIComponent(values.agent)}/autonomy`;
  if (values.user !== undefined) return `/v1/autonomy/users/${encodeURIComponent(values.user)}`;
  return '/v1/autonomy/policy';
}

function printPolicy(policy: { scope: string; subject_id: string | null; version: number; updated_at: string | null; rules: { tool: string; mode: string; reason?: string; conditions?: unknown[] }[] }) {
  process.stdout.write(`${policy.scope}${policy.subject_id ? ` ${policy.subject_id}` : ''}: version ${policy.version}${policy.updated_at ? `, set ${policy.updated_at}` : ' (never set)'}\n`);
  process.stdout.write(table(policy.rules.map((r) => ({ tool: r.tool, mode: r.mode, conditions: r.conditions ?? null, reason: r.reason ?? null })), ['tool', 'mode', 'conditions', 'reason']));
}

function readDocument(file: string): unknown {
  const text = file === '-' ? readFileSync(0, 'utf8') : readFileSync(file, 'utf8');
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new CommandError('INVALID_JSON', `${file === '-' ? 'standard input' : file} is not JSON: ${(err as Error).message}`);
  }
}

/** `platform autonomy get|set|decisions`: the autonomy routes of the management API. */
export async function autonomyCli(argv: string[]) {
  const [verb, ...rest] = argv;
  if (verb === 'get' || verb === 'set') {
    const { values } = parseArgs({ args: rest, options: { agent: { type: 'string' }, user: { type: 'string' }, file: { type: 'string' }, 'api-url': { type: 'string' }, json: { type: 'boolean' } } });
    const url = `${apiUrl(values['api-url'])}${policyPath(values)}`;
    if (verb === 'set' && values.file === undefined) throw new UsageError(`platform autonomy set needs --file\n${AUTONOMY_USAGE}`);
    const res = verb === 'get' ? await httpJson('GET', url, { headers: auth() }) : await httpJson('PUT', url, { headers: auth(), json: readDocument(values.file!) });
    const policy = answer(res);
    return values.json ? print(policy, true) : printPolicy(policy);
  }
  if (verb === 'decisions') {
    const { values } = parseArgs({
      args: rest,
      options: {
        agent: { type: 'string' },
        gateway: { type: 'string' },
        user: { type: 'string' },
        tool: { type: 'string' },
        outcome: { type: 'string' },
        since: { type: 'string' },
        limit: { type: 'string' },
        cursor: { type: 'string' },
        'api-url': { type: 'string' },
        json: { type: 'boolean' },
      },
    });
    const q = new URLSearchParams();
    const names = { agent: 'agent_id', gateway: 'gateway_id', user: 'principal_id', tool: 'tool', outcome: 'outcome', since: 'since', limit: 'limit', cursor: 'cursor' } as const;
    for (const [flag, param] of Object.entries(names)) if (values[flag as keyof typeof names] !== undefined) q.set(param, values[flag as keyof typeof names]!);
    const data = answer(await httpJson('GET', `${apiUrl(values['api-url'])}/v1/autonomy/decisions?${q}`, { headers: auth() })) as { decisions: Record<string, unknown>[]; next_cursor: string | null };
    const rows = data.decisions.map((d) => ({ ...d, target: `${(d.target as { kind: string }).kind}/${(d.target as { id: string }).id}` }));
    return printPage(data, rows, ['created_at', 'principal_id', 'tool', 'outcome', 'decided_by', 'surface', 'target', 'reason'], Boolean(values.json));
    return;
  }
  throw new UsageError(`platform autonomy: expected get, set or decisions\n${AUTONOMY_USAGE}`);
}
