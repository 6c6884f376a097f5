import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { loadConfig } from '../../runtime/core/config/index.ts';
import { readNodeFile } from '../data-dir.ts';
import { apiUrl } from './auth.ts';
import { parseJsonOrUndefined } from './http.ts';
import { CommandError, print, UsageError } from './output.ts';
import { buildPlugin, toolLines } from './plugin-build.ts';
import { readPluginFolder, shown } from './plugin-layout.ts';
import { packFolder } from './plugin-pack.ts';
import { activationFailure, activationOf, uploadArchive } from './plugin-upload.ts';

/** The launcher (compiled bundle while fresh, else the source through tsx), as a user would run the command. */
const PLATFORM = fileURLToPath(new URL('../platform', import.meta.url));

type Target = { kind: 'gateway' | 'agent'; ref: string };

/**
 * Binding a capability to a gateway or an agent is an operator command: the management API has no route for it
 * (a tenant's key uploads and activates; the operator decides what a gateway serves). So a binding is made the way
 * `platform admin gateway bind` makes it, by that very command, which reaches the node through this machine's data
 * directory (a running node's operator token) or DATABASE_URL. Without either there is no operator here: say so
 * before anything is built or uploaded.
 */
function requireOperator(targets: Target[]) {
  if (targets.length === 0) return;
  const config = loadConfig();
  if (config.databaseUrl || readNodeFile(config.dataDir)) return;
  const t = targets[0]!;
  throw new CommandError(
    'OPERATOR_ONLY',
    `--bind-${t.kind} needs the operator: binding is an operator command (the management API has none), and no node runs on this machine's data directory (${config.dataDir}) nor is DATABASE_URL set. Deploy without --bind-*, then have the operator run \`platform admin ${t.kind} bind --${t.kind} ${t.ref} --capability <capability-id>\``,
  );
}

/** Runs `platform admin <kind> bind` in a process of its own (it loads the whole runtime); its JSON answer. */
function operatorBind(t: Target, capabilityId: string): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const child = spawn(PLATFORM, ['admin', t.kind, 'bind', `--${t.kind}`, t.ref, '--capability', capabilityId, '--json'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const answer = parseJsonOrUndefined(out) as { error?: { message: string } } | undefined;
      if (code === 0 && answer && !answer.error) return resolve(answer as Record<string, unknown>);
      const why = answer?.error?.message ?? (err.trim().split('\n')[0]?.replace(/^error: /, '') || `exit ${code}`);
      reject(new Error(why));
    });
  });
}

/**
 * `platform plugins deploy [<dir>]`: build, pack (dist/<name>.npack), upload, wait until the version is active, and
 * bind it where asked. Progress lines on stderr; the outcome on stdout (one JSON document with --json).
 */
export async function deployCli(argv: string[]) {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { world: { type: 'string' }, 'bind-gateway': { type: 'string', multiple: true }, 'bind-agent': { type: 'string', multiple: true }, 'api-url': { type: 'string' }, json: { type: 'boolean' } },
  });
  if (positionals.length > 1) throw new UsageError('usage: platform plugins deploy [<dir>] [--bind-gateway <id|handle>] [--bind-agent <id|handle>] [--json]');
  const dir = positionals[0] ?? '.';
  const targets: Target[] = [...(values['bind-gateway'] ?? []).map((ref) => ({ kind: 'gateway' as const, ref })), ...(values['bind-agent'] ?? []).map((ref) => ({ kind: 'agent' as const, ref }))];
  const progress = (line: string) => process.stderr.write(`${line}\n`);
  readPluginFolder(dir);
  requireOperator(targets);
  const base = apiUrl(values['api-url']);

  const built = await buildPlugin(dir, { world: values.world, progress });
  for (const w of built.warnings) progress(`warning: ${w}`);
  const folder = readPluginFolder(dir);
  const packed = await packFolder(dir, path.join(dir, 'dist', `${folder.name}.npack`), progress);
  progress(`packed ${shown(packed.file)}: ${packed.entries.join(', ')} (${packed.bytes} bytes)`);
  progress(`uploading to ${base}`);
  const up = await uploadArchive(base, packed.file);
  progress(`uploaded ${up.capability_name} version ${up.version} (capability ${up.capability_id}); activating`);
  const activation = await activationOf(base, up.capability_id, up.version);
  const failed = activationFailure(up.version, activation);
  if (failed) throw failed;
  progress(`version ${up.version} is active: ${built.tools.map((t) => t.name).join(', ')}`);

  const bound: { kind: string; ref: string; id: unknown; changed: unknown }[] = [];
  for (const t of targets) {
    const r = await operatorBind(t, up.capability_id).catch((err: Error) => {
      throw new CommandError('BIND_FAILED', `${up.capability_name} version ${up.version} is active (capability ${up.capability_id}), but binding it to ${t.kind} ${t.ref} failed: ${err.message}`);
    });
    bound.push({ kind: t.kind, ref: t.ref, id: r[`${t.kind}_id`], changed: r.changed });
    progress(`bound to ${t.kind} ${t.ref}`);
  }
  const result = {
    ...up,
    status: activation.status,
    component: shown(built.component),
    archive: shown(packed.file),
    tools: built.tools,
    bound,
  };
  if (values.json) return print(result, true);
  process.stdout.write(
    `${up.capability_name} version ${up.version} is active (capability ${up.capability_id})\n${toolLines(built.tools)}${bound.map((b) => `bound to ${b.kind} ${b.ref}\n`).join('')}`,
  );
}
