import { pushBackendMethods, type A2aStreamResponse, type AgentGateway, type PushConfigs, type SendHooks } from '../../runtime/index.ts';
import type { A2aBackend, A2aCallContext } from './backend.ts';
import type { SendMessageParams } from './schemas.ts';
import { tagExtensions } from './extension-tagging.ts';

async function* tagged(frames: AsyncIterable<A2aStreamResponse>, extensions: readonly string[]): AsyncGenerator<A2aStreamResponse> {
  for await (const f of frames) yield tagExtensions(f, extensions);
}

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
    sendMessage: async (p, ctx) => tagExtensions(await agents.sendMessage(p, ctx, hooks(p, ctx)), ctx.extensions),
    sendStreamingMessage: (p, ctx) => tagged(agents.sendStreamingMessage(p, ctx, hooks(p, ctx)), ctx.extensions),
    streamRun: (p, ctx) => agents.streamRun(p, ctx, hooks(p, ctx)),
    getTask: async (p, ctx) => tagExtensions({ task: await agents.getTask(p, ctx) }, ctx.extensions).task,
    listTasks: async (p, ctx) => tagExtensions(await agents.listTasks(p, ctx), ctx.extensions),
    cancelTask: (p, ctx) => agents.cancelTask(p, ctx),
    subscribeToTask: (p, ctx) => tagged(agents.subscribeToTask(p, ctx), ctx.extensions),
    ...pushBackendMethods(push),
  };
}
