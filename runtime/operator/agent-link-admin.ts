import { randomUUID } from 'node:crypto';
import { isUniqueViolation, type AgentRecord, type Repositories, type Store } from '../../store/index.ts';
import { agentToolName } from '../agents/index.ts';
import type { Bus } from '../core/bus/index.ts';
import { PlatformError } from '../core/errors/index.ts';
import { SUBJECTS } from '../core/subjects/index.ts';
import type { ToolRegistry } from '../tools/index.ts';
import { need } from './checks.ts';
import { requireAgent } from './resolve.ts';

/**
 * `agent bind|unbind` take `--capability` or `--agent-tool`: whether these params name an agent tool (and not both).
 */
export function namesAgentTool(p: { capability?: unknown; agentTool?: unknown }): boolean {
  need(p.capability === undefined || p.agentTool === undefined, 'give --capability or --agent-tool, not both');
  need(p.capability !== undefined || p.agentTool !== undefined, 'give --capability <id|name> or --agent-tool <id|handle>');
  return p.agentTool !== undefined;
}

/**
 * The operator's commands that bind an agent to another agent of its account as a tool (`agent_{handle}`), and the
 * principal the calling agent acts as in the delegation chain of its calls: a service principal with the `member`
 * role (execute, never write), created with the agent's first link. A delegated call runs with the lowest role of
 * its chain, so an agent never lends a caller more than that.
 */
export function createAgentLinkAdmin(deps: { store: Store; tools: ToolRegistry; bus?: Bus }) {
  const { store } = deps;

  async function pair(p: { agent: unknown; agentTool: unknown }) {
    const a = await requireAgent(store, p.agent);
    const b = await requireAgent(store, p.agentTool, 'agent tool');
    need(a.id !== b.id, `an agent cannot be bound to itself (${a.handle})`);
    // Not found, as for a capability of another account: an account's agents are all an operator may pair.
    if (b.accountId !== a.accountId) throw new PlatformError('ADMIN_NOT_FOUND', `no agent ${JSON.stringify(p.agentTool)} in the account of agent ${a.handle}`);
    return { a, b };
  }

  /** The agent's principal, made in the link's transaction when it has none. */
  async function ensurePrincipal(t: Repositories, a: AgentRecord): Promise<void> {
    if (await t.agentLinks.principalOf(a.accountId, a.id)) return;
    const id = randomUUID();
    await t.principals.create({ id, accountId: a.accountId, kind: 'service', name: `agent ${a.handle}`, role: 'member' });
    await t.agentLinks.setPrincipal(a.accountId, a.id, id);
  }

  function changed(a: AgentRecord) {
    const target = { kind: 'agent' as const, id: a.id, accountId: a.accountId };
    deps.tools.invalidate(target);
    deps.bus?.publish(SUBJECTS.agentLinksChanged, { accountId: a.accountId, agentId: a.id });
  }

  return {
    /** Lets `agent` call `agentTool` as the tool `agent_{handle}` (idempotent); `changed` says whether it was new. */
    async bindAgentTool(p: { agent: string; agentTool: string; by?: string }) {
      const { a, b } = await pair(p);
      const link = () =>
        store.tx(async (t) => {
          await ensurePrincipal(t, a);
          return t.agentLinks.link(a.accountId, a.id, b.id, p.by ?? 'operator');
        });
      // Two first links of one agent at once both make a principal: the loser's transaction is undone and it retries.
      const isNew = await link().catch((err) => (isUniqueViolation(err) ? link() : Promise.reject(err)));
      changed(a);
      return { agent_id: a.id, agent_tool_id: b.id, tool: agentToolName(b.handle), bound: true, changed: isNew };
    },

    async unbindAgentTool(p: { agent: string; agentTool: string }) {
      const { a, b } = await pair(p);
      if (!(await store.agentLinks.unlink(a.accountId, a.id, b.id))) throw new PlatformError('ADMIN_NOT_FOUND', `agent ${b.handle} is not bound to agent ${a.handle}`);
      changed(a);
      return { agent_id: a.id, agent_tool_id: b.id, tool: agentToolName(b.handle), bound: false };
    },
  };
}
