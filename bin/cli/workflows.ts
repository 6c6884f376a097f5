import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { api, common, query } from './files.ts';
import { CommandError, print, printPage, table, UsageError } from './output.ts';
import { WORKFLOWS_USAGE } from './usage.ts';

function json(text: string | undefined, what: string): unknown {
  if (text === undefined) return undefined;
  const source = text.startsWith('@') ? readFileSync(text.slice(1), 'utf8') : text;
  try {
    return JSON.parse(source);
  } catch (err) {
    throw new CommandError('INVALID_JSON', `${what} is not JSON: ${(err as Error).message}`);
  }
}

const targetPath = (v: { agent?: string | undefined; gateway?: string | undefined }) => {
  if ((v.agent === undefined) === (v.gateway === undefined)) throw new UsageError(`give --agent or --gateway\n${WORKFLOWS_USAGE}`);
  return v.agent !== undefined ? `/v1/agents/${encodeURIComponent(v.agent)}` : `/v1/gateways/${encodeURIComponent(v.gateway!)}`;
};
const runRow = (r: Record<string, unknown>) => ({ ...r, waiting_for: r.waiting_for ? JSON.stringify(r.waiting_for) : null });

/** `platform workflows ...`: read workflows, attach and detach them. */
export async function workflowsCli(argv: string[]) {
  const [verb, ...rest] = argv;
  const { values, positionals } = parseArgs({ args: rest, allowPositionals: true, options: { ...common, agent: { type: 'string' }, gateway: { type: 'string' } } });
  const base = values['api-url'];
  const out = Boolean(values.json);
  switch (verb) {
    case 'list': {
      const data = await api('GET', base, '/v1/workflows');
      return out ? print(data, true) : process.stdout.write(table(data.workflows, ['id', 'name', 'version', 'description']));
    }
    case 'show':
      if (positionals.length !== 1) throw new UsageError(`platform workflows show takes a workflow id\n${WORKFLOWS_USAGE}`);
      return print(await api('GET', base, `/v1/workflows/${encodeURIComponent(positionals[0]!)}`), out);
    case 'attach':
    case 'detach':
      if (positionals.length !== 1) throw new UsageError(`platform workflows ${verb} takes a workflow id\n${WORKFLOWS_USAGE}`);
      return print(await api(verb === 'attach' ? 'PUT' : 'DELETE', base, `${targetPath(values)}/workflows/${encodeURIComponent(positionals[0]!)}`), out);
    case 'attached': {
      const data = await api('GET', base, `${targetPath(values)}/workflows`);
      return out ? print(data, true) : process.stdout.write(table(data.workflows, ['id', 'name', 'version', 'description']));
    }
    default:
      throw new UsageError(`platform workflows: expected list, show, attach, detach or attached\n${WORKFLOWS_USAGE}`);
  }
}

/** `platform runs ...`: start, read, cancel, decide and signal workflow runs. */
export async function runsCli(argv: string[]) {
  const [verb, ...rest] = argv;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: { ...common, input: { type: 'string' }, agent: { type: 'string' }, gateway: { type: 'string' }, workflow: { type: 'string' }, status: { type: 'string' }, limit: { type: 'string' }, cursor: { type: 'string' }, payload: { type: 'string' } },
  });
  const base = values['api-url'];
  const out = Boolean(values.json);
  const run = () => {
    if (positionals.length < 1) throw new UsageError(`platform runs ${verb} takes a run id\n${WORKFLOWS_USAGE}`);
    return `/v1/workflow-runs/${encodeURIComponent(positionals[0]!)}`;
  };
  switch (verb) {
    case 'start': {
      if (positionals.length !== 1) throw new UsageError(`platform runs start takes a workflow id\n${WORKFLOWS_USAGE}`);
      const input = json(values.input, '--input');
      const body = { workflow_id: positionals[0], ...(input !== undefined ? { input } : {}), ...(values.agent ? { agent_id: values.agent } : {}), ...(values.gateway ? { gateway_id: values.gateway } : {}) };
      return print(await api('POST', base, '/v1/workflow-runs', body), out);
    }
    case 'list': {
      const data = await api('GET', base, `/v1/workflow-runs${query({ workflow_id: values.workflow, status: values.status, limit: values.limit, cursor: values.cursor })}`);
      return printPage(data, data.runs.map(runRow), ['id', 'workflow_name', 'status', 'step', 'waiting_for', 'created_at'], out);
      return;
    }
    case 'show':
      return print(await api('GET', base, run()), out);
    case 'cancel':
      return print(await api('POST', base, `${run()}/cancel`), out);
    case 'approve':
    case 'deny':
      return print(await api('POST', base, `${run()}/approve`, { decision: verb }), out);
    case 'signal': {
      if (positionals.length !== 2) throw new UsageError(`platform runs signal takes a run id and a signal\n${WORKFLOWS_USAGE}`);
      const payload = json(values.payload, '--payload');
      return print(await api('POST', base, `${run()}/signal`, { signal: positionals[1], ...(payload !== undefined ? { payload } : {}) }), out);
    }
    default:
      throw new UsageError(`platform runs: expected start, list, show, cancel, approve, deny or signal\n${WORKFLOWS_USAGE}`);
  }
}
