import { PlatformError, type AgentGateway } from '../../runtime/index.ts';
import type { A2aBackend } from './backend.ts';

const noPush = async (): Promise<never> => {
  throw new PlatformError('A2A_PUSH_NOT_SUPPORTED', 'push notification configs are not stored by this node yet');
};

/** The node's agent runtime as the gateway's backend: the task methods of the agents' runs. */
export function agentBackend(agents: AgentGateway): A2aBackend {
  return {
    sendMessage: (p, ctx) => agents.sendMessage(p, ctx),
    sendStreamingMessage: (p, ctx) => agents.sendStreamingMessage(p, ctx),
    getTask: (p, ctx) => agents.getTask(p, ctx),
    listTasks: (p, ctx) => agents.listTasks(p, ctx),
    cancelTask: (p, ctx) => agents.cancelTask(p, ctx),
    subscribeToTask: (p, ctx) => agents.subscribeToTask(p, ctx),
    createPushConfig: noPush,
    getPushConfig: noPush,
    listPushConfigs: noPush,
    deletePushConfig: noPush,
  };
}
