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
export { createPushDelivery, laneOfChange, PUSH_CONTENT_TYPE, RESERVED_STATES, type PushDelivery, type PushDeliveryDeps } from './push-delivery.ts';
export { createPushLanes, type LaneFigures, type PushLaneFigures, type PushLaneName, type PushLaneOptions } from './push-lanes.ts';
