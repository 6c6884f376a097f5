import { parseArgs } from 'node:util';
import { api, common, query } from './files.ts';
import { print, printPage, UsageError } from './output.ts';
import { SCHEDULES_USAGE, TRIGGERS_USAGE } from './usage.ts';

/** `platform schedules list|show|cancel`: the schedule routes of the management API. */
export async function schedulesCli(argv: string[]) {
  const [verb, ...rest] = argv;
  const text = { type: 'string' } as const;
  const { values, positionals } = parseArgs({ args: rest, allowPositionals: true, options: { ...common, agent: text, status: text, limit: text, cursor: text } });
  const base = values['api-url'];
  const out = Boolean(values.json);
  const one = () => {
    if (positionals.length !== 1) throw new UsageError(`platform schedules ${verb} takes a schedule id\n${SCHEDULES_USAGE}`);
    return `/v1/schedules/${encodeURIComponent(positionals[0]!)}`;
  };
  switch (verb) {
    case 'list': {
      const data = await api('GET', base, `/v1/schedules${query({ agent_id: values.agent, status: values.status, limit: values.limit, cursor: values.cursor })}`);
      const rows = data.schedules.map((s: { kind: string; cron: string | null; timezone: string | null; run_at: string | null }) => ({ ...s, when: s.kind === 'cron' ? `${s.cron} (${s.timezone})` : s.run_at }));
      return printPage(data, rows, ['id', 'status', 'when', 'next_at', 'runs', 'agent_id', 'owner_id'], out);
    }
    case 'show':
      return print(await api('GET', base, one()), out);
    case 'cancel':
      return print(await api('POST', base, `${one()}/cancel`), out);
    default:
      throw new UsageError(`platform schedules: expected list, show or cancel\n${SCHEDULES_USAGE}`);
  }
}

/** `platform triggers list|show|delete|rotate-secret`: the trigger routes of the management API. */
export async function triggersCli(argv: string[]) {
  const [verb, ...rest] = argv;
  const text = { type: 'string' } as const;
  const { values, positionals } = parseArgs({ args: rest, allowPositionals: true, options: { ...common, agent: text, limit: text, cursor: text } });
  const base = values['api-url'];
  const out = Boolean(values.json);
  const one = () => {
    if (positionals.length !== 1) throw new UsageError(`platform triggers ${verb} takes a trigger id\n${TRIGGERS_USAGE}`);
    return `/v1/triggers/${encodeURIComponent(positionals[0]!)}`;
  };
  switch (verb) {
    case 'list': {
      const data = await api('GET', base, `/v1/triggers${query({ agent_id: values.agent, limit: values.limit, cursor: values.cursor })}`);
      const rows = data.triggers.map((t: { kind: string; url: string | null; workflow_id: string | null; on: string[] | null }) => ({ ...t, source: t.kind === 'webhook' ? t.url : `${t.workflow_id} on ${t.on!.join(',')}` }));
      return printPage(data, rows, ['id', 'kind', 'source', 'fires', 'last_task_id', 'agent_id', 'owner_id'], out);
    }
    case 'show':
      return print(await api('GET', base, one()), out);
    case 'delete':
      await api('DELETE', base, one());
      process.stdout.write(`deleted trigger ${positionals[0]}\n`);
      return;
    case 'rotate-secret':
      return print(await api('POST', base, `${one()}/rotate-secret`), out);
    default:
      throw new UsageError(`platform triggers: expected list, show, delete or rotate-secret\n${TRIGGERS_USAGE}`);
  }
}
