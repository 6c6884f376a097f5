import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { gatewayUrl } from './auth.ts';
import { a2aCall, a2aStream, artifactDelta, rpcError, textOf, type A2aTarget } from './a2a-client.ts';
import { CommandError, print, table, UsageError } from './output.ts';
import { AGENT_SEND_USAGE, TASKS_USAGE } from './usage.ts';

/**
 * Talking to an agent from the CLI over its A2A gateway, as any integration would: `platform agents send` streams
 * an answer, `platform tasks list|get|cancel` read and cancel the caller's tasks. The credential is a service
 * principal's API key or an agent token (`platform admin agent token`), never the user's login: the gateway refuses
 * a user's key (spec §5, agent gateway).
 */

const STATES = ['SUBMITTED', 'WORKING', 'COMPLETED', 'FAILED', 'CANCELED', 'REJECTED', 'INPUT_REQUIRED', 'AUTH_REQUIRED'].map((s) => `TASK_STATE_${s}`);
const FAILED = new Set(['TASK_STATE_FAILED', 'TASK_STATE_CANCELED', 'TASK_STATE_REJECTED']);

const str = { type: 'string' } as const;
const common = { key: str, url: str, json: { type: 'boolean' } } as const;

/** Where the agent is and what to present: --url or the configured URL of the handle; --key or PLATFORM_AGENT_KEY. */
function targetOf(handle: string | undefined, v: { key?: string; url?: string }, command: string): A2aTarget {
  const credential = v.key ?? process.env.PLATFORM_AGENT_KEY;
  if (!credential) {
    throw new UsageError(
      `${command}: no credential for the agent gateway: pass --key <credential> or set PLATFORM_AGENT_KEY to a service principal's API key (platform admin key create) or an agent token (platform admin agent token --agent <handle> --principal <id>)`,
    );
  }
  if (v.url !== undefined) {
    if (!/^https?:\/\/[^/]+\/?$/.test(v.url)) throw new UsageError(`--url takes the agent gateway's origin, such as http://agent-demo.localhost:8080 (got ${JSON.stringify(v.url)})`);
    return { url: v.url, credential };
  }
  if (!handle) throw new UsageError(`${command}: --agent <handle> is required (or --url <agent URL>)`);
  return { url: gatewayUrl('agent', handle), credential };
}

interface Task {
  id: string;
  contextId: string;
  status: { state: string; timestamp: string; message?: { parts?: { text?: string }[] } };
  artifacts?: { artifactId: string; parts: { text?: string }[] }[];
  history?: { role: string; parts: { text?: string }[] }[];
}

/** `platform agents send <handle> <text>`: SendStreamingMessage, the answer on stdout as it arrives, the outcome on stderr. */
export async function agentSendCli(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({ args: argv, options: { ...common, context: str, task: str }, allowPositionals: true, strict: true });
  if (positionals.length !== 2) throw new UsageError(`platform agents send takes <handle> and <text>\n${AGENT_SEND_USAGE}`);
  const [handle, text] = positionals as [string, string];
  if (text.trim() === '') throw new UsageError('platform agents send: the text is empty');
  const target = targetOf(handle, values, 'platform agents send');
  const message = {
    messageId: randomUUID(),
    role: 'ROLE_USER',
    parts: [{ text }],
    ...(values.context !== undefined ? { contextId: values.context } : {}),
    ...(values.task !== undefined ? { taskId: values.task } : {}),
  };

  const out = process.stdout;
  const shown = new Map<string, string>();
  let last: string | null = null; // the artifact whose text the terminal shows last
  let tail = '\n'; // the last character written to stdout (a fresh line to begin with)
  const write = (s: string) => {
    if (!s) return;
    out.write(s);
    tail = s[s.length - 1]!;
  };
  const showArtifact = (id: string, text: string, append: boolean) => {
    if (last !== null && last !== id && tail !== '\n') write('\n');
    const { full, delta, revised } = artifactDelta(shown.get(id) ?? '', text, append);
    if (revised) {
      process.stderr.write(`\n(the answer was revised; in full:)\n`);
      if (tail !== '\n') write('\n');
    }
    write(delta);
    shown.set(id, full);
    last = id;
  };

  type Outcome = { id: string; contextId: string; state: string; reason?: string };
  let task = null as Outcome | null;
  let reply: { contextId?: string } | null = null;
  for await (const frame of a2aStream(target, 'SendStreamingMessage', { message })) {
    if (values.json) out.write(`${JSON.stringify(frame)}\n`);
    if (frame.error) {
      if (!values.json && tail !== '\n') write('\n');
      throw rpcError(frame.error);
    }
    const r = frame.result ?? {};
    if (values.json) {
      if (r.message) reply = r.message;
      const t = (r.task ?? r.statusUpdate ?? r.artifactUpdate) as { id?: string; taskId?: string; contextId: string; status?: Task['status'] } | undefined;
      const before = (task as Outcome | null)?.state;
      if (t) task = { id: t.id ?? t.taskId!, contextId: t.contextId, state: t.status?.state ?? before ?? 'TASK_STATE_WORKING', reason: textOf(t.status?.message?.parts) || undefined };
      continue;
    }
    if (r.message) {
      reply = r.message;
      write(textOf(r.message.parts));
    } else if (r.task) {
      const t = r.task as Task;
      task = { id: t.id, contextId: t.contextId, state: t.status.state, reason: textOf(t.status.message?.parts) || undefined };
      for (const a of t.artifacts ?? []) showArtifact(a.artifactId, textOf(a.parts), false);
    } else if (r.artifactUpdate) {
      const u = r.artifactUpdate as { taskId: string; contextId: string; artifact: { artifactId: string; parts: { text?: string }[] }; append?: boolean };
      task ??= { id: u.taskId, contextId: u.contextId, state: 'TASK_STATE_WORKING' };
      showArtifact(u.artifact.artifactId, textOf(u.artifact.parts), u.append === true);
    } else if (r.statusUpdate) {
      const u = r.statusUpdate as { taskId: string; contextId: string; status: Task['status'] };
      task = { id: u.taskId, contextId: u.contextId, state: u.status.state, reason: textOf(u.status.message?.parts) || undefined };
    }
  }
  if (!values.json && tail !== '\n') write('\n');

  if (reply) {
    const ctx = reply.contextId ?? '';
    process.stderr.write(`context ${ctx} (a reply, no task; continue the thread with --context ${ctx})\n`);
    return;
  }
  if (!task) throw new CommandError('A2A_STREAM_ENDED', 'the stream ended before the agent answered');
  process.stderr.write(`task ${task.id} ${task.state}, context ${task.contextId} (continue the thread with --context ${task.contextId})\n`);
  if (task.reason && task.state !== 'TASK_STATE_COMPLETED') process.stderr.write(`${task.reason}\n`);
  if (FAILED.has(task.state)) throw new CommandError(task.state, `the task ended ${task.state}${task.reason ? `: ${task.reason}` : ''}`);
  if (task.state === 'TASK_STATE_WORKING' || task.state === 'TASK_STATE_SUBMITTED') {
    throw new CommandError('A2A_STREAM_ENDED', `the stream ended while the task was running: follow it with platform tasks get ${task.id} --agent ${handle}`);
  }
}

const row = (t: Task) => ({ id: t.id, state: t.status.state, timestamp: t.status.timestamp, context: t.contextId });

/** `platform tasks list|get|cancel`: ListTasks, GetTask and CancelTask of the caller's tasks at one agent. */
export async function tasksCli(argv: string[]): Promise<void> {
  const [verb, ...rest] = argv;
  if (verb === 'list') {
    const { values, positionals } = parseArgs({
      args: rest,
      options: { ...common, agent: str, context: str, state: str, 'page-size': str, 'page-token': str },
      allowPositionals: true,
      strict: true,
    });
    if (positionals.length) throw new UsageError(`platform tasks list takes no positional arguments\n${TASKS_USAGE}`);
    let state = values.state;
    if (state !== undefined) {
      state = state.toUpperCase().startsWith('TASK_STATE_') ? state.toUpperCase() : `TASK_STATE_${state.toUpperCase()}`;
      if (!STATES.includes(state)) throw new UsageError(`--state takes one of ${STATES.join(', ')} (got ${JSON.stringify(values.state)})`);
    }
    const size = values['page-size'];
    if (size !== undefined && !/^[1-9]\d{0,3}$/.test(size)) throw new UsageError('--page-size takes a whole number from 1');
    const target = targetOf(values.agent, values, 'platform tasks list');
    const page = await a2aCall<{ tasks: Task[]; nextPageToken: string; pageSize: number; totalSize: number }>(target, 'ListTasks', {
      ...(values.context !== undefined ? { contextId: values.context } : {}),
      ...(state !== undefined ? { status: state } : {}),
      ...(size !== undefined ? { pageSize: Number(size) } : {}),
      ...(values['page-token'] !== undefined ? { pageToken: values['page-token'] } : {}),
    });
    if (values.json) return print(page, true);
    process.stdout.write(table(page.tasks.map(row), ['id', 'state', 'timestamp', 'context']));
    process.stderr.write(`${page.tasks.length} of ${page.totalSize}${page.nextPageToken ? `; next page: --page-token ${page.nextPageToken}` : ''}\n`);
    return;
  }
  if (verb === 'get' || verb === 'cancel') {
    const { values, positionals } = parseArgs({ args: rest, options: { ...common, agent: str }, allowPositionals: true, strict: true });
    if (positionals.length !== 1) throw new UsageError(`platform tasks ${verb} takes <id>\n${TASKS_USAGE}`);
    const target = targetOf(values.agent, values, `platform tasks ${verb}`);
    const t = verb === 'get' ? await a2aCall<Task>(target, 'GetTask', { id: positionals[0] }) : await a2aCall<Task>(target, 'CancelTask', { id: positionals[0] });
    if (values.json) return print(t, true);
    const lines: [string, string][] = Object.entries(row(t));
    const asked = t.history?.find((m) => m.role === 'ROLE_USER');
    if (asked) lines.push(['asked', textOf(asked.parts)]);
    const reason = textOf(t.status.message?.parts);
    if (reason && t.status.state !== 'TASK_STATE_COMPLETED') lines.push(['reason', reason]);
    for (const [k, v] of lines) process.stdout.write(`${k}: ${v}\n`);
    const answer = (t.artifacts ?? []).map((a) => textOf(a.parts)).filter((s) => s !== '');
    if (answer.length) process.stdout.write(`answer:\n${answer.join('\n')}\n`);
    return;
  }
  throw new UsageError(`platform tasks: expected list, get or cancel\n${TASKS_USAGE}`);
}
