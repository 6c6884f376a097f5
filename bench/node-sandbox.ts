import { compileArtifacts, createHotLoop, createLaneScheduler, createSandbox, createSpinPolicy, parsePluginConfig, reflectComponent, sandboxSizing } from '../runtime/index.ts';

/**
 * A component loaded into sandbox threads and lanes sized as a node sizes them on this machine (sandboxSizing), with a
 * node's spin policy and hot loop, so a bench measures the sandbox a tenant's calls meet: `call` runs one export as the
 * one tenant's call through its lane; `hotLoop` is there for a server to poll for its next request as a node does.
 */
export async function nodeSizedSandbox(key: string, wasm: Uint8Array) {
  const signatures = new Map(reflectComponent(wasm).functions.map((f) => [f.name, f.type]));
  const files = await compileArtifacts(wasm, parsePluginConfig('schema_version: "1.0"'));
  const sizing = sandboxSizing();
  const spinPolicy = createSpinPolicy();
  const hotLoop = createHotLoop(spinPolicy);
  const sandbox = createSandbox({ threads: sizing.threads, spinPolicy, hotLoop });
  const lanes = createLaneScheduler({ slots: sizing.slots, perTenantInFlight: sizing.perTenantInFlight, queueCap: 1024 });
  const code = sandbox.load(key, files);
  return {
    files,
    sizing,
    hotLoop,
    call: (fn: string, args: Record<string, unknown>) =>
      lanes.run('tenant', () => sandbox.invoke(code, { tenant: 'tenant', export: fn, signature: signatures.get(fn)!, args, timeoutMs: 5_000 })),
    close: async () => {
      await sandbox.close();
      hotLoop.stop();
      spinPolicy.stop();
    },
  };
}
