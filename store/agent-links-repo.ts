import type { Queryable } from './db.ts';

/** An agent bound to another agent as a tool, with what the tool is made of (the bound agent's handle and card text). */
export interface AgentLinkRecord {
  accountId: string;
  agentId: string;
  toolAgentId: string;
  handle: string;
  name: string;
  description: string;
  createdAt: string;
}

type LinkRow = { account_id: string; agent_id: string; tool_agent_id: string; handle: string; name: string; description: string; created_at: string };

/** Which agents an agent may call as tools, and the principal it acts as when it does; every query is account-scoped. */
export function agentLinksRepo(db: Queryable) {
  return {
    /** Idempotent: false when the link existed. A link to itself or across accounts fails on the table's constraints. */
    async link(accountId: string, agentId: string, toolAgentId: string, by: string): Promise<boolean> {
      const { rowCount } = await db.query(
        `insert into agent_links (account_id, agent_id, tool_agent_id, created_by) values ($1, $2, $3, $4)
         on conflict (account_id, agent_id, tool_agent_id) do nothing`,
        [accountId, agentId, toolAgentId, by],
      );
      return rowCount > 0;
    },
    async unlink(accountId: string, agentId: string, toolAgentId: string): Promise<boolean> {
      const { rowCount } = await db.query('delete from agent_links where account_id = $1 and agent_id = $2 and tool_agent_id = $3', [accountId, agentId, toolAgentId]);
      return rowCount > 0;
    },
    /** The agents bound to `agentId` as tools, by handle. */
    async list(accountId: string, agentId: string): Promise<AgentLinkRecord[]> {
      const { rows } = await db.query<LinkRow>(
        `select l.account_id, l.agent_id, l.tool_agent_id, a.handle, a.name, a.description, l.created_at
         from agent_links l join agents a on a.id = l.tool_agent_id and a.account_id = l.account_id
         where l.account_id = $1 and l.agent_id = $2 order by a.handle`,
        [accountId, agentId],
      );
      return rows.map((r) => ({ accountId: r.account_id, agentId: r.agent_id, toolAgentId: r.tool_agent_id, handle: r.handle, name: r.name, description: r.description, createdAt: r.created_at }));
    },
    /** The service principal the agent acts as in a delegation chain, if it has one. */
    async principalOf(accountId: string, agentId: string): Promise<string | null> {
      const { rows } = await db.query<{ principal_id: string }>('select principal_id from agent_principals where account_id = $1 and agent_id = $2', [accountId, agentId]);
      return rows[0]?.principal_id ?? null;
    },
    /** Records the agent's principal; a second one for the same agent is a unique violation (the caller retries). */
    async setPrincipal(accountId: string, agentId: string, principalId: string): Promise<void> {
      await db.query('insert into agent_principals (account_id, agent_id, principal_id) values ($1, $2, $3)', [accountId, agentId, principalId]);
    },
  };
}
