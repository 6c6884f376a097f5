import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { versionOutcome, authenticate, registerUpload, type Caller } from '../../runtime/index.ts';
import { buildShapesComponent } from '../helpers/js-components.ts';
import { npack } from '../helpers/npack.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

/** JSON in, WIT values through the canonical ABI of a real component, JSON out: every composite kind survives. */
describe('tool values through an exported interface', () => {
  let p: TestPlatform;
  let owner: Caller;
  let call: (tool: string, args: unknown) => ReturnType<TestPlatform['node']['services']['invokeTool']>;
  let tools: { name: string; inputSchema: Record<string, unknown> }[];

  beforeAll(async () => {
    const wasm = await buildShapesComponent();
    p = await startTestPlatform();
    const r = await authenticate({ store: p.node.services.store, signer: p.node.services.signer, now: () => Date.now() }, p.node.demo!.userKey);
    if (!r.ok) throw new Error(r.reason);
    owner = r.caller;
    const archive = await npack([
      { name: 'shapes.wasm', body: Buffer.from(wasm) },
      { name: 'platform.yaml', body: 'schema_version: "1.0"\nmetadata: { name: shape-kit }\nresources: { limits: { timeout: 20s } }' },
    ]);
    const up = await registerUpload(p.node.services, { accountId: owner.accountId, principalId: owner.principalId, filename: 'shape-kit.npack', archive });
    await versionOutcome(p.node.services, { accountId: owner.accountId, capabilityId: up.capability_id, version: 1 });
    const v = await p.node.services.store.db.query<{ tools: typeof tools }>('select tools from capability_versions where capability_id = $1', [up.capability_id]);
    tools = v.rows[0]!.tools;
    call = (tool, args) => p.node.services.invokeTool(owner, up.capability_id, tool, args);
  }, 180_000);
  afterAll(() => p?.close());

  const all = {
    level: 'very-high',
    perms: { read: true, write: false, 'exec-it': true },
    shape: { tag: 'rect', val: { x: -3, 'y-pos': 7 } },
    note: 'hello',
    big: 2 ** 53 - 1,
    small: -128,
    bytes: Buffer.from([0, 1, 254, 255]).toString('base64'),
    pair: ['two', 65535],
    ch: '✓',
    items: [{ x: 1, 'y-pos': 2 }],
  };

  it('names interface tools {namespace}_{function} with hyphens as underscores', () => {
    expect(tools.map((t) => t.name).sort()).toEqual(['shape_kit_check', 'shape_kit_echo', 'shape_kit_maybe']);
  });

  it('round-trips records, enums, flags, variants, options, u64, s8, bytes, tuples, chars and lists', async () => {
    expect(await call('shape_kit_echo', { a: all })).toEqual({ isError: false, value: all });
    const other = { ...all, level: 'low', shape: { tag: 'empty' }, note: null, perms: { read: false, write: false, 'exec-it': false }, items: [] };
    const r = await call('shape_kit_echo', { a: other });
    expect(r).toMatchObject({ isError: false, value: { ...other, shape: { tag: 'empty' } } });
  });

  it('maps results: ok is the value, err is a tool error carrying the payload', async () => {
    expect(await call('shape_kit_check', { n: 5 })).toEqual({ isError: false, value: 'fine 5' });
    expect(await call('shape_kit_check', { n: -1 })).toMatchObject({ isError: true, kind: 'component-error', payload: 'low' });
    expect(await call('shape_kit_check', { n: -11 })).toMatchObject({ isError: true, kind: 'component-error', payload: 'very-high' });
  });

  it('maps options to a value or null, and an omitted option parameter to none', async () => {
    expect(await call('shape_kit_maybe', { x: 41 })).toEqual({ isError: false, value: 42 });
    expect(await call('shape_kit_maybe', { x: null })).toEqual({ isError: false, value: null });
    expect(await call('shape_kit_maybe', {})).toEqual({ isError: false, value: null });
  });

  it('refuses values outside the types before the call (jco would coerce them)', async () => {
    for (const bad of [
      { ...all, small: -129 },
      { ...all, big: -1 },
      { ...all, level: 'medium' },
      { ...all, shape: { tag: 'circle', val: -1 } },
      { ...all, ch: 'ab' },
      { ...all, pair: ['x'] },
      { ...all, perms: { read: true, delete: true } },
    ]) {
      await expect(call('shape_kit_echo', { a: bad })).rejects.toMatchObject({ code: 'TOOL_INVALID_ARGUMENTS' });
    }
  });
});
