import type { ContentPart, RunAgentInput } from '@ag-ui/core';
import { RunAgentInputSchema } from '@ag-ui/core/schemas';
import { PlatformError } from '../../runtime/index.ts';

/**
 * The AG-UI run input (RunAgentInput of @ag-ui/core 1.0) as the message a run sends (A2A-RPC-03). The route's
 * payload is not shaped by the interface spec; this is ours (README, "AG-UI"):
 * - `threadId` is the A2A `contextId`: the platform's thread, scoped by account, agent and calling principal. An id
 *   the platform never issued is adopted as a new thread in that scope (as A2A does with an unknown contextId), so a
 *   client may choose its ids; another caller's thread of the same id is another thread.
 * - The platform keeps the thread: only the LAST user message of `messages` is sent (its `id` is the A2A
 *   `messageId`, which must be new in the thread); earlier messages are what the thread holds already and are not
 *   read. Text content becomes text parts; image, audio, video and document parts with inline data become raw parts
 *   and those with a URL url parts (the A2A attachment rules apply: 20 MiB per file, fetched through egress).
 * - `runId` is echoed on RUN_STARTED and the run's end; it names no A2A object (a run that continues a task after an
 *   interrupt has a new runId and the same task).
 * - `resume` answers the interrupt of the thread's last run (agui-gates.ts): the run then sends the gate decision
 *   instead of a user message.
 * - `tools` (client-side tools), `context`, `state` and `forwardedProps` are accepted and not used: the agent's tools
 *   are the ones bound to it on the platform.
 */

/** An AG-UI run input carries the conversation: larger than an A2A request needs, smaller than one with 20 MiB files. */
export const AGUI_BODY_LIMIT = 8 * 1024 * 1024;
/** How many problems of an invalid input the error names. */
const SHOWN_ISSUES = 5;

const invalid = (message: string) => new PlatformError('AGUI_INVALID_INPUT', `invalid AG-UI run input: ${message}`);

/** The run input, checked with @ag-ui/core's own schema; every problem named with its path. */
export function readRunInput(value: unknown): RunAgentInput {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalid('the body must be a RunAgentInput object');
  const r = RunAgentInputSchema.safeParse(value);
  if (r.success) return r.data as RunAgentInput;
  const issues = r.error.issues.slice(0, SHOWN_ISSUES).map((i) => `${i.path.length ? i.path.join('.') : '(input)'}: ${i.message}`);
  const more = r.error.issues.length > SHOWN_ISSUES ? ` (and ${r.error.issues.length - SHOWN_ISSUES} more)` : '';
  throw invalid(`${issues.join('; ')}${more}`);
}

type A2aPartInput = { text: string } | { raw: string; mediaType: string; filename?: string } | { url: string; mediaType?: string; filename?: string };

function partOf(p: ContentPart, at: string): A2aPartInput {
  if (p.type === 'text') return { text: p.text };
  const s = p.source;
  const filename = p.type === 'document' && typeof (p.metadata as { filename?: unknown } | undefined)?.filename === 'string' ? { filename: (p.metadata as { filename: string }).filename } : {};
  if (s.type === 'data') return { raw: s.value, mediaType: s.mimeType, ...filename };
  if (s.type === 'url') return { url: s.value, ...(s.mimeType ? { mediaType: s.mimeType } : {}), ...filename };
  throw invalid(`${at}.source: a ${s.type} source cannot be read here: send the content inline (data) or as a url`);
}

/** The A2A SendMessage params of a run: its last user message, in the thread `threadId`. */
export function userTurn(input: RunAgentInput): { message: Record<string, unknown> } {
  const at = input.messages.findLastIndex((m) => m.role === 'user');
  if (at < 0) throw invalid('messages: no user message to send (the last user message of messages is what the run sends)');
  const m = input.messages[at] as Extract<RunAgentInput['messages'][number], { role: 'user' }>;
  const parts = typeof m.content === 'string' ? [{ text: m.content }] : m.content.map((p, i) => partOf(p, `messages.${at}.content.${i}`));
  if (!parts.length) throw invalid(`messages.${at}.content: the message is empty`);
  return { message: { messageId: m.id, role: 'ROLE_USER', contextId: input.threadId, parts } };
}
