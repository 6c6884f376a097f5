import { accountMachine, accountTimers, deviceSessionMachine, deviceSessionTimers } from '../actors/index.ts';
import type { Store } from '../store/index.ts';
import { createActorHost, type ActorHost, type ActorKind } from './actor-host/index.ts';
import { createLocalBus, type Bus } from './bus/index.ts';
import { systemClock, type Clock } from './clock.ts';
import { urls, type PlatformConfig } from './config.ts';
import { createAdmin, createDeviceFlow, createTokenSigner, randomSecretForSetting, type Admin, type DeviceFlow, type TokenSigner } from './identity/index.ts';

/** Everything a surface needs from the runtime, built once per node by the composition root. */
export interface Services {
  config: PlatformConfig;
  store: Store;
  bus: Bus;
  clock: Clock;
  actors: ActorHost;
  signer: TokenSigner;
  deviceFlow: DeviceFlow;
  admin: Admin;
  urls: ReturnType<typeof urls>;
  close(): Promise<void>;
}

export const MANAGEMENT_JWT_SECRET_KEY = 'management.jwt_secret';

export async function createServices(opts: { config: PlatformConfig; store: Store; bus?: Bus; clock?: Clock; onError?: (err: unknown, context: string) => void }): Promise<Services> {
  const { config, store } = opts;
  const clock = opts.clock ?? systemClock;
  const bus = opts.bus ?? createLocalBus();
  const u = urls(config);
  const now = () => clock.now();
  // Generated once per installation and shared by every node through the database.
  const secret = await store.settings.getOrCreate(MANAGEMENT_JWT_SECRET_KEY, randomSecretForSetting());
  const signer = createTokenSigner(secret, u.api, now);

  let deviceFlow: DeviceFlow | undefined;
  const kinds: ActorKind[] = [
    {
      kind: 'device-session',
      logic: deviceSessionMachine,
      timers: deviceSessionTimers as ActorKind['timers'],
      onDone: (address, state) => deviceFlow!.onSessionDone(address, state),
    },
    { kind: 'account', logic: accountMachine, timers: accountTimers as ActorKind['timers'] },
  ];
  const actors = createActorHost({
    store,
    kinds,
    clock,
    bus,
    idleMs: config.actorIdleSeconds * 1000,
    ...(opts.onError ? { onError: opts.onError } : {}),
  });
  deviceFlow = createDeviceFlow({
    store,
    actors,
    signer,
    now,
    ttlSeconds: config.deviceCodeTtlSeconds,
    intervalSeconds: config.devicePollIntervalSeconds,
    verificationUri: `${u.api}/device`,
  });
  const admin = createAdmin({ store, actors, now, urls: u });
  actors.timers.start();
  return {
    config,
    store,
    bus,
    clock,
    actors,
    signer,
    deviceFlow,
    admin,
    urls: u,
    async close() {
      await actors.stop();
      await bus.close();
    },
  };
}
