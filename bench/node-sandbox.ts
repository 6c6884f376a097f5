import { compileArtifacts, createLaneScheduler, createSandbox, parsePluginConfig, reflectComponent, sandboxSizing } from '../runtime/index.ts';

/**
 * A component loaded into sandbox threads and lanes sized as a node sizes them on this machine (sandboxSizing), so a
 * bench measures the sandbox a tenant's calls meet: `call` runs one export as the one tenant's call through its lane.
 */
export async function nodeSizedSandbox(key: string, wasm: Uint8Array) {
  const signatures = new Map(reflectComponent(wasm).functions.map((f) => [f.name, f.type]));
  const files = await compileArtifacts(wasm, parsePluginConfig('schema_version: "1.0"'));
  const sizing = sandboxSizing();
  const sandbox = createSandbox({ threads: sizing.threads });
  const lanes = createLaneScheduler({ slots: sizing.slots, perTenantInFlight: sizing.perTenantInFlight, queueCap: 1024 });
  const code = sandbox.load(key, files);
  return {
    files,
    sizing,
    call: (fn: string, args: Record<string, unknown>) =>
      lanes.run('tenant', () => sandbox.invoke(code, { tenant: 'tenant', export: fn, signature: signatures.get(fn)!, args, timeoutMs: 5_000 })),
    close: () => sandbox.close(),
  };
}
