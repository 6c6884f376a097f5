import { randomUUID } from 'node:crypto';
import type { AgentLinkRecord, Store } from '../../store/index.ts';
import { isPlatformError, PlatformError } from '../core/errors/index.ts';
import { SUBJECTS } from '../core/subjects/index.ts';
import { admitAgentToken, mintAgentToken, type AgentTokenCaller, type AgentTokens, type Caller } from '../identity/index.ts';
import type { BindingTarget, ToolEntry, ToolResult, ToolSource } from '../tools/index.ts';
import { TERMINAL, type A2aCaller, type A2aPart, type A2aTask } from './a2a-shapes.ts';
import type { AgentGateway } from './agent-gateway.ts';
import { partsText } from './thread-history.ts';

/** The longest message one agent may send another through its tool (what a tool result may carry back, too). */
export const MAX_AGENT_TOOL_MESSAGE = 64 * 1024;
/** A delegated token is verified the moment it is minted: it never needs to live long. */
const DELEGATED_TOKEN_TTL_SECONDS = 60;

/** An agent's tool name: `agent_{handle}`, hyphens as underscores (the rule of plugin tool names). */
export const agentToolName = (handle: string) => `agent_${handle.replaceAll('-', '_')}`;

/** The agent runtime's task methods, as the tool calls them (in-process, with an admitted caller). */
export type AgentCalls = Pick<AgentGateway, 'sendMessage' | 'subscribeToTask' | 'getTask' | 'cancelTask'>;

export interface AgentToolDeps {
  store: Pick<Store, 'agentLinks' | 'agents' | 'principals'>;
  agentTokens: AgentTokens;
  /** The agents' runs; built after the tool registry (whose tools the runs call), so read when a tool is called. */
  agents: () => AgentCalls;
}

/**
 * A call of `to` on behalf of `caller`, made by the agent `from`: a token for `to` whose subject is the calling
 * principal and whose `act` chain is the agent's principal in front of the chain the caller came with, minted only if
 * it would be admitted (at most five actors, every principal a live member) and then admitted by the same function
 * as at the agent gateway. The admitted caller is never more than the calling one: the subject stays, and the role is
 * the lowest along the chain.
 */
export async function delegatedCall(
  deps: Pick<AgentToolDeps, 'store' | 'agentTokens'>,
  from: { accountId: string; agentId: string },
  to: { id: string; accountId: string },
  caller: Caller,
): Promise<{ token: string; caller: AgentTokenCaller }> {
  if (caller.accountId !== from.accountId || to.accountId !== from.accountId) throw new PlatformError('IDENTITY_DELEGATION_INVALID', 'an agent calls agents of its own account only, for callers of that account');
  const actor = await deps.store.agentLinks.principalOf(from.accountId, from.agentId);
  if (!actor) throw new PlatformError('IDENTITY_DELEGATION_INVALID', 'the calling agent has no principal to act as (bind the agent tool again)');
  const actors = [actor, ...(caller.actors ?? [])];
  const { token } = await mintAgentToken({ store: deps.store, tokens: deps.agentTokens }, { accountId: from.accountId, agentId: to.id, subject: caller.principalId, actors, ttlSeconds: DELEGATED_TOKEN_TTL_SECONDS });
  const admitted = await admitAgentToken({ store: deps.store, agentTokens: deps.agentTokens }, to, token);
  return { token, caller: admitted.caller };
}

const fail = (message: string): ToolResult => ({ isError: true, kind: 'error', message });
/** A message's or an artifact's parts as the calling model reads them (the thread's own rendering of parts). */
const textOf = (parts: readonly A2aPart[] | undefined) => partsText(parts ?? []);

/** What the calling agent's model reads: the answer of a completed task, or why there is none. */
function outcome(handle: string, task: A2aTask): ToolResult {
  const status = textOf(task.status.message?.parts);
  switch (task.status.state) {
    case 'TASK_STATE_COMPLETED': {
      const answer = (task.artifacts ?? []).map((a) => textOf(a.parts)).join('\n');
      return { isError: false, value: answer || status };
    }
    case 'TASK_STATE_FAILED':
    case 'TASK_STATE_REJECTED':
      return fail(`the agent ${handle} failed: ${status || task.status.state}`);
    case 'TASK_STATE_CANCELED':
      return fail(`the agent ${handle} canceled the task${status ? `: ${status}` : ''}`);
    default:
      return fail(`the agent ${handle} stopped at ${task.status.state}, which a tool call cannot answer; its task was canceled`);
  }
}

/**
 * Runs the bound agent on one message and waits for its end, through the agent runtime's own A2A task methods.
 *
 * In-process rather than over HTTP to the bound agent's gateway: the admission is the gateway's own function
 * (`admitAgentToken`), and the runtime's SendMessage, SubscribeToTask, GetTask and CancelTask are what the gateway
 * calls after admitting a request — so the nested call is checked and run exactly as an outside caller's, without a
 * loopback hop that would need this node's own address (unknown to the runtime, and refused by the egress rules as
 * a private one), a second TLS and JSON round trip per call, and a socket held for the length of the run.
 *
 * The run is a task from the start (`returnImmediately`), so a cancel of the calling run can always CancelTask it.
 */
async function runAgent(agents: AgentCalls, handle: string, caller: A2aCaller, text: string, signal: AbortSignal | undefined): Promise<ToolResult> {
  const sent = await agents.sendMessage({ message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }] }, configuration: { returnImmediately: true, historyLength: 0 } }, caller);
  if ('message' in sent) return { isError: false, value: textOf(sent.message.parts) };
  const id = sent.task.id;
  const cancel = () => agents.cancelTask({ id }, caller).catch(() => null);
  const aborted = new Promise<'aborted'>((resolve) => {
    if (signal?.aborted) resolve('aborted');
    else signal?.addEventListener('abort', () => resolve('aborted'), { once: true });
  });
  let task = sent.task;
  if (!TERMINAL.has(task.status.state)) {
    const frames = agents.subscribeToTask({ id }, caller)[Symbol.asyncIterator]();
    try {
      for (;;) {
        const next = await Promise.race([frames.next(), aborted]);
        if (next === 'aborted') {
          await cancel();
          // The stream ends with the canceled status; ending it from here would wait for that frame anyway.
          void frames.return?.(undefined).catch(() => {});
          return fail(`the call of agent ${handle} was canceled`);
        }
        if (next.done) break;
        const state = 'task' in next.value ? next.value.task.status.state : 'statusUpdate' in next.value ? next.value.statusUpdate.status.state : null;
        if (state && TERMINAL.has(state)) break;
      }
      await frames.return?.(undefined);
    } catch (err) {
      // It ended between the send and the subscription: GetTask tells how.
      if (!isPlatformError(err, 'A2A_UNSUPPORTED_OPERATION')) throw err;
    }
    task = await agents.getTask({ id, historyLength: 0 }, caller);
  }
  // A task that waits for input nobody here can give is not left waiting.
  if (!TERMINAL.has(task.status.state)) await cancel();
  return outcome(handle, task);
}

/**
 * Agents bound to an agent as tools (`platform admin agent bind --agent-tool`): one tool per bound agent, named
 * `agent_{handle}`, described by the bound agent's description, taking `{message}`. Calling it runs the bound agent
 * for the same caller, never elevated, with the calling agent recorded in the token's delegation chain; a chain that
 * would pass five actors is refused, so a cycle of agents calling each other ends there with a tool error.
 */
export function agentToolSource(deps: AgentToolDeps): ToolSource {
  function entry(target: BindingTarget, link: AgentLinkRecord): ToolEntry {
    const name = agentToolName(link.handle);
    return {
      name,
      description: link.description.trim() || `Asks the agent ${link.name} (${link.handle}) and answers with its reply.`,
      inputSchema: {
        type: 'object',
        properties: { message: { type: 'string', minLength: 1, maxLength: MAX_AGENT_TOOL_MESSAGE, description: `What to send the agent ${link.name}` } },
        required: ['message'],
        additionalProperties: false,
      },
      // The bound agent may call any tool of its own: nothing about the call is read-only.
      readOnly: false,
      requiresAnchor: false,
      origin: { kind: 'agent', agentId: link.toolAgentId },
      async invoke(caller, args, opts) {
        const message = (args as { message?: unknown } | null)?.message;
        if (typeof message !== 'string' || message.trim() === '') return fail(`${name} takes {"message": "<text>"}: a non-empty string`);
        if (message.length > MAX_AGENT_TOOL_MESSAGE) return fail(`${name}: the message is longer than ${MAX_AGENT_TOOL_MESSAGE} characters`);
        try {
          const to = await deps.store.agents.get(target.accountId, link.toolAgentId);
          if (!to) return fail(`the agent ${link.handle} no longer exists`);
          const delegated = await delegatedCall(deps, { accountId: target.accountId, agentId: target.id }, to, caller);
          const signal = opts.signal ?? new AbortController().signal;
          return await runAgent(deps.agents(), link.handle, { ...delegated.caller, signal }, message, opts.signal);
        } catch (err) {
          // Refusals (the chain too deep, a principal not live, the bound agent's lane full) are the model's to read.
          if (isPlatformError(err)) return fail(`${err.code}: ${err.message}`);
          throw err;
        }
      },
    };
  }
  return {
    changedOn: [SUBJECTS.agentLinksChanged],
    async tools(target) {
      if (target.kind !== 'agent') return [];
      return (await deps.store.agentLinks.list(target.accountId, target.id)).map((l) => entry(target, l));
    },
  };
}
