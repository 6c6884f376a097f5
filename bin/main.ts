import { describeFailure } from './cli/failure.ts';
import { helpFor, versionText } from './cli/help.ts';
import { UsageError } from './cli/output.ts';

// Each command's module is loaded when that command runs: most commands need none of the runtime, and loading all of
// them (and through them the whole runtime) made every command take about two seconds to start. Compiled ahead of time
// (bin/compile-cli.ts), each of these imports is a chunk of its own.
const load = {
  admin: () => import('./cli/admin.ts'),
  /** The operator commands' table and usage lines, without the runtime the commands load. */
  adminUsage: () => import('./cli/admin-commands.ts'),
  /** Every client command's usage lines (bin/cli/usage.ts imports nothing). */
  usage: () => import('./cli/usage.ts'),
  agentCalls: () => import('./cli/agent-calls.ts'),
  auth: () => import('./cli/auth.ts'),
  capabilities: () => import('./cli/capabilities.ts'),
  autonomy: () => import('./cli/autonomy.ts'),
  files: () => import('./cli/files.ts'),
  skills: () => import('./cli/skills.ts'),
  workflows: () => import('./cli/workflows.ts'),
  builds: () => import('./cli/builds.ts'),
  schedules: () => import('./cli/schedules.ts'),
  cluster: () => import('./cli/cluster.ts'),
  plugins: () => import('./cli/plugins.ts'),
  model: () => import('./cli/model.ts'),
  serve: () => import('./cli/serve.ts'),
  viz: () => import('./cli/viz.ts'),
  devCert: () => import('./cli/dev-cert.ts'),
};

/** The whole usage text: the usage lines of every command, from the two modules that hold them and nothing else. */
async function usage(): Promise<string> {
  const [{ ADMIN_USAGE, AGENTS_USAGE, GATEWAYS_USAGE }, { AGENT_SEND_USAGE, TASKS_USAGE, AUTONOMY_USAGE, FILES_USAGE, SKILLS_USAGE, WORKFLOWS_USAGE, SCHEDULES_USAGE, TRIGGERS_USAGE, BUILDS_USAGE, MODEL_USAGE, VIZ_USAGE, DEV_CERT_USAGE, PLUGINS_USAGE }] = await Promise.all([
    load.adminUsage(),
    load.usage(),
  ]);
  return `usage: platform <command>

  platform serve                          run a node (embedded defaults, or DATABASE_URL)
${DEV_CERT_USAGE}
  platform login [--api-url URL]          sign in with the device flow; stores a one-hour token
  platform logout                         forget the stored token
  platform whoami [--json]                who the stored token belongs to, and whether it still works
  platform capabilities list [--json]     list the account's capabilities
${PLUGINS_USAGE}
  platform cluster up [--nodes 3]         start N local nodes on PostgreSQL and NATS (Ctrl-C stops them)
  platform cluster status [--json]        members, shards per node, lease ages, active actors
${AUTONOMY_USAGE}
${FILES_USAGE}
${SKILLS_USAGE}
${WORKFLOWS_USAGE}
${SCHEDULES_USAGE}
${TRIGGERS_USAGE}
${BUILDS_USAGE}
${GATEWAYS_USAGE}
${AGENTS_USAGE}
${AGENT_SEND_USAGE}
${TASKS_USAGE}
${MODEL_USAGE}
${VIZ_USAGE}
${ADMIN_USAGE}
`;
}

/** `--help` (or `-h`) anywhere after a command: that command's usage, not its work. */
const wantsHelp = (args: readonly string[]) => args.includes('--help') || args.includes('-h');

async function main(argv: string[]) {
  const [command, ...rest] = argv;
  if (command === '--version' || command === 'version') {
    process.stdout.write(versionText());
    return;
  }
  if (command !== undefined && !command.startsWith('-') && command !== 'help' && wantsHelp(rest)) {
    const text = helpFor(await usage(), [command, ...rest.filter((a) => !a.startsWith('-'))]);
    if (text === null) throw new UsageError(`unknown command ${JSON.stringify(command)}\n\n${await usage()}`);
    process.stdout.write(text);
    return;
  }
  switch (command) {
    case 'serve':
      return (await load.serve()).serveCli();
    case 'dev-cert':
      return (await load.devCert()).devCertCli(rest);
    case 'admin':
      return (await load.admin()).adminCli(rest);
    case 'login':
      return (await load.auth()).loginCli(rest);
    case 'logout':
      return (await load.auth()).logoutCli(rest);
    case 'whoami':
      return (await load.auth()).whoamiCli(rest);
    case 'capabilities':
      return (await load.capabilities()).capabilitiesCli(rest);
    case 'autonomy':
      return (await load.autonomy()).autonomyCli(rest);
    case 'viz':
      return (await load.viz()).vizCli(rest);
    case 'cluster':
      return (await load.cluster()).clusterCli(rest);
    case 'plugins':
      return (await load.plugins()).pluginsCli(rest);
    case 'gateways':
      return (await load.admin()).gatewaysCli(rest);
    case 'agents':
      if (rest[0] === 'send') return (await load.agentCalls()).agentSendCli(rest.slice(1));
      if (['files', 'cat', 'quota', 'journal', 'journal-delete'].includes(rest[0]!)) return (await load.files()).agentHomeCli(rest);
      if (rest[0] === 'skills') return (await load.skills()).agentSkillsCli(rest.slice(1));
      if (rest[0] !== 'list' && rest[0] !== 'show') {
        const [{ AGENTS_USAGE }, { AGENT_SEND_USAGE, FILES_USAGE }] = await Promise.all([load.adminUsage(), load.usage()]);
        throw new UsageError(`platform agents: expected list, show, send, files, cat, quota, journal, journal-delete or skills\n${AGENTS_USAGE}\n${AGENT_SEND_USAGE}\n${FILES_USAGE}`);
      }
      return (await load.admin()).agentsCli(rest);
    case 'builds':
      return (await load.builds()).buildsCli(rest);
    case 'schedules':
      return (await load.schedules()).schedulesCli(rest);
    case 'triggers':
      return (await load.schedules()).triggersCli(rest);
    case 'workflows':
      return (await load.workflows()).workflowsCli(rest);
    case 'runs':
      return (await load.workflows()).runsCli(rest);
    case 'skills':
      return (await load.skills()).skillsCli(rest);
    case 'attachments':
      return (await load.files()).attachmentsCli(rest);
    case 'files':
      return (await load.files()).filesCli(rest);
    case 'identity':
      return (await load.files()).identityCli(rest);
    case 'tasks':
      return (await load.agentCalls()).tasksCli(rest);
    case 'model':
      return (await load.model()).modelCli(rest);
    case undefined:
    case '--help':
    case '-h':
      process.stdout.write(await usage());
      return;
    case 'help': {
      // `platform help <command…>`: the same as `platform <command…> --help`.
      const text = rest.length ? helpFor(await usage(), rest) : await usage();
      if (text === null) throw new UsageError(`unknown command ${JSON.stringify(rest.join(' '))}\n\n${await usage()}`);
      process.stdout.write(text);
      return;
    }
    default:
      throw new UsageError(`unknown command ${JSON.stringify(command)}\n\n${await usage()}`);
  }
}

main(process.argv.slice(2)).catch((err: unknown) => {
  const failure = describeFailure(err, process.argv[2]);
  if (failure.exitCode === 1 && process.argv.includes('--json')) process.stdout.write(`${JSON.stringify({ error: { code: failure.code, message: failure.message.replace(/^error: /, '') } })}\n`);
  process.stderr.write(`${failure.message}\n`);
  process.exit(failure.exitCode);
});
