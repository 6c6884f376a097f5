import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Ajv } from 'ajv';
import { afterAll, describe, expect, it } from 'vitest';
import { createTaskPool } from '../../runtime/core/workers/index.ts';
import { inputSchema, toolValidators, type ToolValidator } from '../../runtime/index.ts';

/** The worst event-loop delay a tool's first call may cause on the node while its schema is compiled. */
const LOOP_MAX_MS = 50;

/**
 * A plugin tool's input schema is built from its WIT (up to 10,000 schema nodes) and checked with Ajv. Compiled on the
 * node's loop at the tool's first call, a record of 4,000 fields held it for most of a second; it is compiled in the
 * task pool, and the node only evaluates the validator's source.
 */
describe('plugin tool schemas are compiled off the node thread', () => {
  const tasks = createTaskPool({ threads: 2 });
  afterAll(() => tasks.close());

  // A parameter of a record of 4,000 fields of several kinds, as a component's WIT would give it.
  const kinds = ['s32', 'string', 'bool', { list: 'u8' }, { option: 'u64' }] as const;
  const schema = inputSchema({ params: [['r', { record: Array.from({ length: 4000 }, (_, i) => [`f${i}`, kinds[i % kinds.length]]) }], ['n', 's32']], results: [] } as never);
  const good = () => ({ r: Object.fromEntries(Array.from({ length: 4000 }, (_, i) => [`f${i}`, [1, 'x', true, 'AAEC', null][i % 5]])), n: 3 });

  it('[MCP-TOOLS-01] a 4,000-field record compiles in the task pool while the loop stays under 50 ms; the validator judges as Ajv does', { timeout: 120_000, retry: 2 }, async () => {
    const validatorOf = toolValidators(tasks);
    // The worker's first task loads its modules: warm it with a small schema.
    await validatorOf('warm', { type: 'object' }, 'tenant-a');
    const delay = monitorEventLoopDelay({ resolution: 5 });
    delay.enable();
    const started = performance.now();
    const [v, again] = await Promise.all([validatorOf('big', schema, 'tenant-a'), validatorOf('big', schema, 'tenant-a')]);
    const tookMs = performance.now() - started;
    delay.disable();
    if (process.env.HOSTILE_DEBUG) console.log('compile', tookMs.toFixed(0), 'ms; loop delay max', (delay.max / 1e6).toFixed(1), 'ms');
    // Two first calls at once share one compile.
    expect(again).toBe(v);
    expect(delay.max / 1e6, 'event loop delay').toBeLessThan(LOOP_MAX_MS);

    // The same verdicts and errors as Ajv compiling the schema in place (the way it was checked before).
    const reference = new Ajv({ strict: false, allErrors: true }).addFormat('int64', true).addFormat('uint64', true).compile(schema);
    const cases: unknown[] = [good(), { ...good(), n: 2 ** 31 }, { ...good(), extra: 1 }, { n: 1 }, { r: { ...good().r, f1: 5, f3: 'AA==', f4: 2 ** 60 }, n: 0 }, null, []];
    for (const c of cases) {
      const verdict = (f: ToolValidator) => [f(c), (f.errors ?? []).map((e) => `${e.instancePath} ${e.message}`)];
      expect(verdict(v), JSON.stringify(c)?.slice(0, 80)).toEqual(verdict(reference as ToolValidator));
    }
    expect(v(good())).toBe(true);
  });

  it("a tenant's first calls share its own compile, never another tenant's (whose lane may be full); the result is shared", { timeout: 60_000 }, async () => {
    const lanes: string[] = [];
    const validatorOf = toolValidators({ run: (...a: Parameters<typeof tasks.run>) => (lanes.push(a[4].tenant), tasks.run(...a)) });
    const small = { type: 'object', properties: { a: { type: 'integer' } }, additionalProperties: false };
    const [a1, a2, b] = await Promise.all([validatorOf('k', small, 'tenant-a'), validatorOf('k', small, 'tenant-a'), validatorOf('k', small, 'tenant-b')]);
    expect(lanes).toEqual(['tenant-a', 'tenant-b']);
    expect(a2).toBe(a1);
    expect([a1({ a: 1 }), b({ a: 1 }), b({ a: 'x' })]).toEqual([true, true, false]);
    // Compiled once, it serves every tenant as it is.
    const c = validatorOf('k', small, 'tenant-c');
    expect(typeof c).toBe('function');
    expect(lanes).toHaveLength(2);
  });

  it('a compile past its limits is TOOL_SCHEMA_LIMIT, and the next call compiles again', { timeout: 60_000 }, async () => {
    const limits = { timeoutMs: 1, onLimit: 'TOOL_SCHEMA_LIMIT' as const };
    const validatorOf = toolValidators(tasks, limits);
    await expect(validatorOf('big', schema, 'tenant-b')).rejects.toMatchObject({ code: 'TOOL_SCHEMA_LIMIT' });
    // The failure is not kept: with time enough, the next call compiles it; the one after gets it as it is.
    limits.timeoutMs = 60_000;
    const v = await validatorOf('big', schema, 'tenant-b');
    expect(v(good())).toBe(true);
    expect(validatorOf('big', schema, 'tenant-b')).toBe(v);
  });
});
