import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { api, common, query } from './files.ts';
import { CommandError, print, printPage, UsageError } from './output.ts';
import { BUILDS_USAGE } from './usage.ts';

const read = (file: string, flag: string) => {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw new UsageError(`${flag} ${file} cannot be read: ${(err as Error).message}`);
  }
};

/** `platform builds ...`: the plugin build routes of the management API. */
export async function buildsCli(argv: string[]) {
  const [verb, ...rest] = argv;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: { ...common, name: { type: 'string' }, source: { type: 'string' }, wit: { type: 'string' }, world: { type: 'string' }, config: { type: 'string' }, description: { type: 'string' }, wait: { type: 'boolean' }, limit: { type: 'string' }, cursor: { type: 'string' } },
  });
  const base = values['api-url'];
  const out = Boolean(values.json);
  const one = () => {
    if (positionals.length !== 1) throw new UsageError(`platform builds ${verb} takes a build id\n${BUILDS_USAGE}`);
    return `/v1/plugin-builds/${encodeURIComponent(positionals[0]!)}`;
  };
  switch (verb) {
    case 'create': {
      if (!values.name || !values.source || !values.wit || !values.world) throw new UsageError(`platform builds create needs --name, --source, --wit and --world\n${BUILDS_USAGE}`);
      const body = {
        name: values.name,
        source: read(values.source, '--source'),
        wit: read(values.wit, '--wit'),
        world: values.world,
        ...(values.config ? { config: read(values.config, '--config') } : {}),
        ...(values.description !== undefined ? { description: values.description } : {}),
      };
      let build = await api('POST', base, '/v1/plugin-builds', body);
      // --wait follows the build to its end: a build takes tens of seconds.
      while (values.wait && (build.status === 'queued' || build.status === 'building')) {
        await sleep(1000);
        build = await api('GET', base, `/v1/plugin-builds/${build.id}`);
      }
      if (values.wait && build.status !== 'succeeded') {
        if (out) print(build, true);
        throw new CommandError('BUILD_FAILED', `the build ${build.status}: ${build.error ?? ''}`);
      }
      return print(build, out);
    }
    case 'list': {
      const data = await api('GET', base, `/v1/plugin-builds${query({ limit: values.limit, cursor: values.cursor })}`);
      return printPage(data, data.builds, ['id', 'name', 'status', 'capability_id', 'version', 'created_at'], out);
      return;
    }
    case 'show':
      return print(await api('GET', base, one()), out);
    case 'cancel':
      return print(await api('POST', base, `${one()}/cancel`), out);
    default:
      throw new UsageError(`platform builds: expected create, list, show or cancel\n${BUILDS_USAGE}`);
  }
}
