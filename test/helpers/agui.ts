import { HttpAgent, type BaseEvent } from '@ag-ui/client';
import { randomUUID } from 'node:crypto';
import { agentOrigin, sdkFetch } from './a2a.ts';
import type { TestPlatform } from './platform.ts';

/** The official AG-UI client (a strict one: it rejects events out of order) for an agent (the demo's) at `path`. */
export function aguiAgent(p: TestPlatform, credential: string, opts: { path?: string; threadId?: string; handle?: string } = {}) {
  return new HttpAgent({ url: `${agentOrigin(p, opts.handle)}${opts.path ?? '/agui'}`, fetch: sdkFetch(credential) as never, ...(opts.threadId ? { threadId: opts.threadId } : {}) });
}

/**
 * One run: the user's message (none: a run that only resumes), every event the client applied, what it ended with,
 * its error if any, and the messages the client now holds.
 */
export async function aguiRun(agent: HttpAgent, text: string | null, params: Parameters<HttpAgent['runAgent']>[0] = {}) {
  if (text !== null) agent.addMessage({ id: randomUUID(), role: 'user', content: text });
  const events: BaseEvent[] = [];
  let error: unknown = null;
  const result = await agent.runAgent(params, { onEvent: ({ event }) => void events.push(event) }).catch((err) => ((error = err), null));
  return { events, types: events.map((e) => e.type), result, error, messages: agent.messages };
}
