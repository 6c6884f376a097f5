import { pushBackendMethods, type AgentGateway, type PushConfigs, type SendHooks } from '../../runtime/index.ts';
import type { A2aBackend, A2aCallContext } from './backend.ts';
import type { SendMessageParams } from './schemas.ts';

/**
 * The node's runtime as the gateway's backend: the agents' runs for the task methods, the push configs for the
 * four config methods, joined here because the agents feature sits below push. A push config sent inline with a
 * message is vetted before anything runs and stored once the task id is taken.
 */
export function agentBackend(agents: AgentGateway, push: PushConfigs): A2aBackend {
  const hooks = (p: SendMessageParams, ctx: A2aCallContext): SendHooks => {
    const inline = p.configuration?.taskPushNotificationConfig;
    if (!inline) return {};
    push.vet(inline);
    return { onTask: (taskId) => push.create({ ...inline, taskId }, ctx) };
  };
  return {
    sendMessage: async (p, ctx) => agents.sendMessage(p, ctx, hooks(p, ctx)),
    sendStreamingMessage: (p, ctx) => agents.sendStreamingMessage(p, ctx, hooks(p, ctx)),
    getTask: (p, ctx) => agents.getTask(p, ctx),
    listTasks: (p, ctx) => agents.listTasks(p, ctx),
    cancelTask: (p, ctx) => agents.cancelTask(p, ctx),
    subscribeToTask: (p, ctx) => agents.subscribeToTask(p, ctx),
    ...pushBackendMethods(push),
  };
}
