import { randomUUID } from 'node:crypto';
import { JOURNAL_LIMITS, type AgentRecord, type Store } from '../../store/index.ts';
import { isPlatformError, PlatformError } from '../core/errors/index.ts';
import { AGENT_TOKEN_TTL_SECONDS, agentAudience, hasAuthority, mintAgentToken, type AgentTokens } from '../identity/index.ts';
import type { ToolRegistry } from '../tools/index.ts';
import { agentToolName } from '../agents/index.ts';
import { builtinRef, need, unique, validateHandle } from './checks.ts';
import { requireAccount, requireAgent as findAgent, requireCapability as findCapability, requirePrincipal } from './resolve.ts';

/** What the operator commands need of the models: whether a `provider/model` reference can be served. */
export interface ModelCheck {
  check(ref: string): void;
}

const MAX_INSTRUCTIONS = 32_000;

const target = (a: AgentRecord) => ({ kind: 'agent' as const, id: a.id, accountId: a.accountId });

/**
 * The operator's commands for agents: create one (its instructions and model), bind and unbind the capabilities it
 * may call (the same tool registry as gateways, keyed by the agent as binding target), list and show them. The
 * management API has no agent writes (spec §1): these run where the data is, like the gateway commands.
 */
export function createAgentAdmin(deps: {
  store: Store;
  urls: { agent(h: string): string };
  tools: ToolRegistry;
  models: ModelCheck;
  defaultModel: string;
  agentTokens: AgentTokens;
}) {
  const { store } = deps;

  const requireAgent = (ref: string) => findAgent(store, ref);

  /** A capability of the agent's own account, by id or by name (a name must be unambiguous). */
  const requireCapability = (a: AgentRecord, ref: string) => findCapability(store, a.accountId, ref, "the agent's account");

  function checkModel(ref: string) {
    try {
      deps.models.check(ref);
    } catch (err) {
      // The operator's mistake, said as one: the model's own message names the providers there are.
      if (isPlatformError(err, 'MODEL_UNKNOWN')) throw new PlatformError('ADMIN_INVALID', err.message);
      throw err;
    }
  }

  async function view(a: AgentRecord) {
    const bindings = await store.bindings.list(a.accountId, target(a));
    const links = await store.agentLinks.list(a.accountId, a.id);
    return {
      id: a.id,
      account_id: a.accountId,
      handle: a.handle,
      name: a.name,
      description: a.description,
      instructions: a.instructions,
      model: a.model,
      url: deps.urls.agent(a.handle),
      capabilities: bindings.map((b) => b.capabilityId),
      // The agents it may call as tools (`agent bind --agent-tool`).
      agents: links.map((l) => ({ id: l.toolAgentId, handle: l.handle, tool: agentToolName(l.handle) })),
      created_at: a.createdAt,
    };
  }

  return {
    async createAgent(p: { account: string; handle: string; name: string; description?: string; instructions?: string; model?: string }) {
      const { id: accountId } = await requireAccount(store, p.account);
      validateHandle(p.handle);
      need(typeof p.name === 'string' && p.name.trim().length > 0 && p.name.length <= 200, 'agent name must be 1-200 characters');
      need((p.description ?? '').length <= 2000, 'agent description must be at most 2000 characters');
      need((p.instructions ?? '').length <= MAX_INSTRUCTIONS, `agent instructions must be at most ${MAX_INSTRUCTIONS} characters`);
      const model = p.model ?? deps.defaultModel;
      checkModel(model);
      const id = randomUUID();
      await unique(`agent handle ${p.handle}`, () =>
        store.agents.create({ id, accountId, handle: p.handle, name: p.name.trim(), description: p.description ?? '', instructions: p.instructions ?? '', model }),
      );
      return { id, handle: p.handle, model, url: deps.urls.agent(p.handle) };
    },

    /** Lets the agent call a capability's tools (idempotent); `changed` says whether it was new. */
    async bindAgent(p: { agent: string; capability: string; by?: string }) {
      const a = await requireAgent(p.agent);
      const builtin = builtinRef(p.capability);
      if (builtin) {
        const changed = await store.builtinBindings.bind(a.accountId, target(a), builtin.id, p.by ?? 'operator');
        deps.tools.invalidate(target(a));
        return { agent_id: a.id, capability_id: builtin.id, bound: true, changed };
      }
      const capability = await requireCapability(a, p.capability);
      const changed = await store.bindings.bind(a.accountId, target(a), capability, p.by ?? 'operator');
      deps.tools.invalidate(target(a));
      return { agent_id: a.id, capability_id: capability, bound: true, changed };
    },

    async unbindAgent(p: { agent: string; capability: string }) {
      const a = await requireAgent(p.agent);
      const builtin = builtinRef(p.capability);
      if (builtin) {
        if (!(await store.builtinBindings.unbind(a.accountId, target(a), builtin.id))) throw new PlatformError('ADMIN_NOT_FOUND', `built-in ${builtin.id} is not bound to agent ${a.handle}`);
        deps.tools.invalidate(target(a));
        return { agent_id: a.id, capability_id: builtin.id, bound: false };
      }
      const capability = await requireCapability(a, p.capability);
      if (!(await store.bindings.unbind(a.accountId, target(a), capability))) throw new PlatformError('ADMIN_NOT_FOUND', `capability ${capability} is not bound to agent ${a.handle}`);
      deps.tools.invalidate(target(a));
      return { agent_id: a.id, capability_id: capability, bound: false };
    },

    async listAgents(p: { account?: string }) {
      const accountId = p.account === undefined ? undefined : (await requireAccount(store, p.account)).id;
      return Promise.all((await store.agents.listAll(accountId)).map(view));
    },

    async showAgent(p: { agent: string }) {
      return view(await requireAgent(p.agent));
    },

    /**
     * The agent's journal for one user (the Journal built-in), as the operator reads it: newest first, or the best
     * matches of `query`; of one thread when given.
     */
    async journal(p: { agent: string; principal: string; query?: string; thread?: string; limit?: number }) {
      const a = await requireAgent(p.agent);
      const member = await requirePrincipal(store, p.principal, { accountId: a.accountId, where: `agent ${a.handle}'s account` });
      const limit = p.limit ?? 20;
      need(Number.isSafeInteger(limit) && limit >= 1 && limit <= JOURNAL_LIMITS.read, `--limit must be 1 to ${JOURNAL_LIMITS.read} (got ${JSON.stringify(p.limit)})`);
      need(p.query === undefined || p.query.length <= 1000, '--query takes at most 1000 characters');
      const entries = await store.journal.read({ accountId: a.accountId, agentId: a.id, principalId: member.id }, { limit, ...(p.query ? { query: p.query } : {}), ...(p.thread ? { contextId: p.thread } : {}) });
      return { agent_id: a.id, principal_id: member.id, entries: entries.map((e) => ({ id: e.id, kind: e.kind, content: e.content, tags: e.tags, context_id: e.contextId, task_id: e.taskId, created_at: e.createdAt })) };
    },

    /**
     * An agent token for an integration (spec §5, agent gateway 3): the principal calls the agent as itself, for
     * `expiresIn` seconds (at most an hour). Only a token the gateway would admit is minted: the principal must be a
     * live member of the agent's account with execute authority.
     */
    async mintToken(p: { agent: string; principal: string; expiresIn?: number }) {
      const a = await requireAgent(p.agent);
      const ttl = p.expiresIn ?? AGENT_TOKEN_TTL_SECONDS;
      need(Number.isSafeInteger(ttl) && ttl >= 1 && ttl <= AGENT_TOKEN_TTL_SECONDS, `--expires-in must be 1 to ${AGENT_TOKEN_TTL_SECONDS} seconds (got ${JSON.stringify(p.expiresIn)})`);
      const member = await requirePrincipal(store, p.principal, { accountId: a.accountId, where: `agent ${a.handle}'s account` });
      need(member.status === 'active' && member.role !== null, `principal ${p.principal} is not a live member of the account (${member.status === 'active' ? 'no longer a member' : member.status})`);
      need(hasAuthority(member.role, 'execute'), `principal ${p.principal} (role ${member.role}) has no execute authority on agents: the gateway would refuse its token`);
      const { token, expiresIn } = await mintAgentToken({ store, tokens: deps.agentTokens }, { accountId: a.accountId, agentId: a.id, subject: member.id, ttlSeconds: ttl });
      const exp = (JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as { exp: number }).exp;
      return {
        token,
        audience: agentAudience(a.id),
        agent_id: a.id,
        principal_id: member.id,
        url: deps.urls.agent(a.handle),
        expires_in: expiresIn,
        expires_at: new Date(exp * 1000).toISOString(),
      };
    },
  };
}
