export {
  createPushConfigs,
  pushBackendMethods,
  type ListPushConfigsInput,
  type PushConfigInput,
  type PushConfigPage,
  type PushConfigRefInput,
  type PushConfigs,
  type PushConfigsDeps,
  type PushConfigView,
  type PushScope,
  type TaskVisible,
} from './push-configs.ts';
export { checkPushSecrets, checkPushUrl, PUSH_LIMITS, type PushSecrets } from './push-rules.ts';
