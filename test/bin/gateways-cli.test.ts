import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { startCliNode } from '../helpers/cli-node.ts';

describe('platform gateways list|show and admin gateway bind|unbind, against a running node', () => {
  let node: Awaited<ReturnType<typeof startCliNode>>;
  let server: Awaited<ReturnType<typeof startCliNode>>['server'];
  let env: Record<string, string>;
  let dataDir: string;
  beforeAll(async () => {
    node = await startCliNode('platform-gw-cli-');
    ({ server, env, dataDir } = node);
  }, 120_000);
  afterAll(() => node?.close());

  it('shows what a caller would see, before and after a binding', async () => {
    const up = await runCli(['plugins', 'upload', path.join(dataDir, 'calc.npack'), '--json'], env);
    expect(up.code, up.stderr).toBe(0);
    expect(up.json).toMatchObject({ version: 1, status: 'active' });

    const list = await runCli(['gateways', 'list', '--json'], env);
    expect(list.code, list.stderr).toBe(0);
    const demo = (list.json as { handle: string; id: string; url: string; auth_mode: string; presentation_mode: string }[]).find((g) => g.handle === 'demo')!;
    expect(demo).toMatchObject({ url: `http://mcp-demo.localhost:${server.port}`, auth_mode: expect.any(String), presentation_mode: 'adaptive' });

    const before = await runCli(['gateways', 'show', 'demo', '--json'], env);
    expect(before.json).toMatchObject({ handle: 'demo', url: demo.url, effective_mode: 'direct', bound_tools: [], listed_tools: { signed_in: [] } });

    const bind = await runCli(['admin', 'gateway', 'bind', '--gateway', demo.id, '--capability', up.json.capability_id, '--json'], env);
    expect(bind.code, bind.stderr).toBe(0);
    expect(bind.json).toMatchObject({ gateway_id: demo.id, capability_id: up.json.capability_id, bound: true });
    const after = await runCli(['gateways', 'show', 'demo'], env);
    expect(after.stdout).toMatch(/calc_add/);
    expect((await runCli(['gateways', 'show', 'demo', '--json'], env)).json).toMatchObject({ bound_tools: ['calc_add'], listed_tools: { signed_in: ['calc_add'] } });

    const unbind = await runCli(['admin', 'gateway', 'unbind', '--gateway', demo.id, '--capability', up.json.capability_id, '--json'], env);
    expect(unbind.json).toMatchObject({ bound: false });
    expect((await runCli(['gateways', 'show', 'demo', '--json'], env)).json).toMatchObject({ bound_tools: [] });
    const again = await runCli(['admin', 'gateway', 'unbind', '--gateway', demo.id, '--capability', up.json.capability_id, '--json'], env);
    expect(again.code).not.toBe(0);
    expect(again.stdout + again.stderr).toMatch(/ADMIN_NOT_FOUND/);
    const unknown = await runCli(['gateways', 'show', 'no-such-gateway'], env);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stdout + unknown.stderr).toMatch(/no gateway "no-such-gateway"/);
  }, 120_000);
});
