import { randomUUID } from 'node:crypto';
import { cpSync, existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { pluginBuildAddressOf, type CompileOutput, type PluginBuildContext, type PluginBuildInput, type PrepareOutput, type TaskCaller } from '../../actors/index.ts';
import { buildRowWrite, type PluginBuildRow, type Store } from '../../store/index.ts';
import type { ActorSystem, EffectContext, RowProjection } from '../core/actor-host/index.ts';
import { isPlatformError, PlatformError } from '../core/errors/index.ts';
import type { TaskPool } from '../core/workers/index.ts';
import { hasAuthority, type Caller } from '../identity/index.ts';
import { runBuild } from './build-process.ts';
import { writeNpack } from './npack-archive.ts';
import { registerUpload } from './register-upload.ts';

/** What a build takes: JavaScript source, the WIT world it implements, and optionally its platform.yaml. */
export const BUILD_SOURCE_LIMITS = { sourceBytes: 256 * 1024, witBytes: 64 * 1024, configBytes: 16 * 1024 } as const;
export const BUILD_NAME = /^[a-z][a-z0-9-]{0,62}[a-z0-9]$/;
const WORLD = /^[a-z][a-z0-9-]{0,63}$/;

// The WASI WIT packages the component's world may import come with jco (a dependency of componentize-js).
export const WASI_WIT = (() => {
  const fromComponentize = createRequire(fileURLToPath(import.meta.resolve('@bytecodealliance/componentize-js')));
  let dir = path.dirname(fromComponentize.resolve('@bytecodealliance/jco'));
  while (!existsSync(path.join(dir, 'package.json'))) dir = path.dirname(dir);
  return path.join(dir, 'lib/wit/builtin/0.2.12');
})();
export const WASI_PACKAGES = ['wasi-cli', 'wasi-clocks', 'wasi-filesystem', 'wasi-http', 'wasi-io', 'wasi-random', 'wasi-sockets'];

const iso = (ms: number) => new Date(ms).toISOString();
const invalid = (message: string) => new PlatformError('BUILD_INVALID', message);
const toCaller = (accountId: string, c: TaskCaller): Caller => ({ accountId, principalId: c.principalId, kind: c.kind as Caller['kind'], role: c.role as Caller['role'], via: c.via as Caller['via'] });

/** A build's status row, from its actor's state. */
export const pluginBuildProjection: RowProjection = ({ after }) => {
  const c = after.context as unknown as PluginBuildContext;
  return buildRowWrite({ accountId: c.accountId, id: c.buildId, status: c.status, capabilityId: c.capabilityId, version: c.version, logs: c.logs, error: c.error, updatedAt: c.updatedAt });
};

const defaultConfig = (name: string, description: string) => `schema_version: "1.0"\nmetadata:\n  name: ${name}\n  description: ${JSON.stringify(description)}\n`;

export interface PluginBuildsDeps {
  store: Store;
  actors: () => ActorSystem;
  tasks: TaskPool;
  now: () => number;
  /** Where builds lay out their files (outside any directory the node serves; removed after each build). */
  buildsDir?: string;
}

/**
 * Plugin builds (spec §1: create, list, read, cancel): JavaScript built with componentize-js into a component,
 * packed with its WIT and platform.yaml, and registered exactly as an upload of that `.npack` would be (admission,
 * then activation as the version's own effect). A PluginBuild actor drives it; its two effects are here.
 */
export function createPluginBuilds(deps: PluginBuildsDeps) {
  const root = deps.buildsDir ?? path.join(os.tmpdir(), 'platform-builds');
  const dirOf = (buildId: string) => path.join(root, buildId);
  const found = async (c: Caller, id: string) => {
    const b = await deps.store.pluginBuilds.get(c.accountId, id);
    if (!b || !(hasAuthority(c.role, 'write') || b.ownerId === c.principalId)) throw new PlatformError('BUILD_NOT_FOUND', `no plugin build ${id} visible to this caller`);
    return b;
  };

  /** Lays out a build's directory: its source, its WIT and the WASI packages the world may import. */
  async function layout(accountId: string, buildId: string) {
    const src = await deps.store.pluginBuilds.source(accountId, buildId);
    if (!src) throw new PlatformError('BUILD_NOT_FOUND', `no plugin build ${buildId}`);
    const dir = dirOf(buildId);
    await rm(dir, { recursive: true, force: true });
    await mkdir(path.join(dir, 'src'), { recursive: true, mode: 0o700 });
    await mkdir(path.join(dir, 'wit', 'deps'), { recursive: true });
    await writeFile(path.join(dir, 'src', 'plugin.js'), src.source);
    await writeFile(path.join(dir, 'wit', 'world.wit'), src.wit);
    for (const p of WASI_PACKAGES) cpSync(path.join(WASI_WIT, p), path.join(dir, 'wit', 'deps', p), { recursive: true });
    return { dir, src };
  }

  /** The build's turn in the account's lane has come: it still exists (nothing is written until it compiles). */
  async function prepare(input: { accountId: string; buildId: string }): Promise<PrepareOutput> {
    if (!(await deps.store.pluginBuilds.get(input.accountId, input.buildId))) throw new PlatformError('BUILD_NOT_FOUND', `no plugin build ${input.buildId}`);
    return { at: iso(deps.now()) };
  }

  async function compile(input: { accountId: string; buildId: string; name: string; description: string; caller: TaskCaller }, ctx: EffectContext): Promise<CompileOutput> {
    // Laid out here and removed when the compile ends, so a cancel or a restart leaves no directory behind.
    const { dir, src } = await layout(input.accountId, input.buildId);
    try {
      const r = await runBuild(dir, src.world, ctx.signal);
      if (!r.ok) throw new PlatformError('BUILD_FAILED', `${r.reason ?? 'the build failed'}${r.log ? `\n${r.log.trim().slice(-2000)}` : ''}`);
      const wasm = await readFile(path.join(dir, 'plugin.wasm'));
      const archive = await writeNpack([
        { name: `${input.name}.wasm`, bytes: wasm },
        { name: 'platform.yaml', bytes: Buffer.from(src.config ?? defaultConfig(input.name, input.description)) },
        { name: `${input.name}.wit`, bytes: Buffer.from(src.wit) },
      ]);
      const caller = toCaller(input.accountId, input.caller);
      const up = await registerUpload({ store: deps.store, actors: deps.actors(), tasks: deps.tasks }, { accountId: input.accountId, principalId: caller.principalId, filename: `${input.name}.npack`, archive, give: true });
      return { capabilityId: up.capability_id, version: up.version, logs: r.log, at: iso(deps.now()) };
    } catch (err) {
      if (isPlatformError(err)) throw err;
      throw new PlatformError('BUILD_FAILED', `the build failed: ${(err as Error).message}`, { cause: err });
    } finally {
      await rm(dir, { recursive: true, force: true }).catch(() => {});
    }
  }

  return {
    effects: { prepare, compile },

    /** Starts a build (write authority: a build registers a plugin version that activates itself). */
    async create(c: Caller, b: { name: string; description?: string; source: string; wit: string; world: string; config?: string }): Promise<PluginBuildRow> {
      if (!hasAuthority(c.role, 'write')) throw new PlatformError('MGMT_FORBIDDEN', `forbidden: the ${c.role} role lacks write authority`);
      if (!BUILD_NAME.test(b.name)) throw invalid('name: 2 to 64 lowercase letters, digits and hyphens, starting with a letter (the plugin it builds)');
      if (!WORLD.test(b.world)) throw invalid('world: the name of the WIT world the source implements');
      if (Buffer.byteLength(b.source) > BUILD_SOURCE_LIMITS.sourceBytes) throw new PlatformError('BUILD_TOO_LARGE', `source: at most ${BUILD_SOURCE_LIMITS.sourceBytes} bytes`);
      if (Buffer.byteLength(b.wit) > BUILD_SOURCE_LIMITS.witBytes) throw new PlatformError('BUILD_TOO_LARGE', `wit: at most ${BUILD_SOURCE_LIMITS.witBytes} bytes`);
      if (b.config !== undefined && Buffer.byteLength(b.config) > BUILD_SOURCE_LIMITS.configBytes) throw new PlatformError('BUILD_TOO_LARGE', `config: at most ${BUILD_SOURCE_LIMITS.configBytes} bytes`);
      if (!b.wit.includes(`world ${b.world}`)) throw invalid(`wit: declares no world ${b.world}`);
      const id = randomUUID();
      const at = iso(deps.now());
      const description = b.description ?? '';
      await deps.store.pluginBuilds.create({ accountId: c.accountId, id, name: b.name, description, ownerId: c.principalId, source: b.source, wit: b.wit, world: b.world, config: b.config ?? null, createdAt: at });
      const input: PluginBuildInput = { accountId: c.accountId, buildId: id, name: b.name, description, caller: { principalId: c.principalId, kind: c.kind, role: c.role, via: c.via }, at };
      await deps.actors().create(pluginBuildAddressOf(c.accountId, id), input);
      return (await deps.store.pluginBuilds.get(c.accountId, id))!;
    },
    get: found,
    list: (c: Caller, q: { limit: number; before?: { createdAt: string; id: string } }) => deps.store.pluginBuilds.list(c.accountId, { ...q, ...(hasAuthority(c.role, 'write') ? {} : { ownerId: c.principalId }) }),
    async cancel(c: Caller, id: string): Promise<PluginBuildRow> {
      const b = await found(c, id);
      if (b.status !== 'queued' && b.status !== 'building') throw new PlatformError('BUILD_ENDED', `build ${id} has ended (${b.status})`);
      try {
        await deps.actors().ask(pluginBuildAddressOf(c.accountId, id), { type: 'CANCEL', at: iso(deps.now()), by: c.principalId });
      } catch (err) {
        if (!isPlatformError(err, 'PLT_ACTOR_NOT_FOUND')) throw err;
        throw new PlatformError('BUILD_ENDED', `build ${id} has ended`);
      }
      return (await deps.store.pluginBuilds.get(c.accountId, id))!;
    },
  };
}

export type PluginBuilds = ReturnType<typeof createPluginBuilds>;
