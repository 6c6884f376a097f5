import { ConfigError } from '../runtime/index.ts';
import { ADMIN_USAGE, adminCli, AGENTS_USAGE, agentsCli, GATEWAYS_USAGE, gatewaysCli } from './cli/admin.ts';
import { AGENT_SEND_USAGE, agentSendCli, TASKS_USAGE, tasksCli } from './cli/agent-calls.ts';
import { loginCli, logoutCli, whoamiCli } from './cli/auth.ts';
import { capabilitiesCli } from './cli/capabilities.ts';
import { AUTONOMY_USAGE, autonomyCli } from './cli/autonomy.ts';
import { agentHomeCli, attachmentsCli, FILES_USAGE, filesCli, identityCli } from './cli/files.ts';
import { agentSkillsCli, SKILLS_USAGE, skillsCli } from './cli/skills.ts';
import { runsCli, WORKFLOWS_USAGE, workflowsCli } from './cli/workflows.ts';
import { BUILDS_USAGE, buildsCli } from './cli/builds.ts';
import { clusterCli } from './cli/cluster.ts';
import { pluginsCli } from './cli/plugins.ts';
import { CommandError, UsageError } from './cli/output.ts';
import { MODEL_USAGE, modelCli } from './cli/model.ts';
import { serveCli } from './cli/serve.ts';
import { VIZ_USAGE, vizCli } from './cli/viz.ts';

const USAGE = `usage: platform <command>

  platform serve                          run a node (embedded defaults, or DATABASE_URL)
  platform login [--api-url URL]          sign in with the device flow; stores a one-hour token
  platform logout                         forget the stored token
  platform whoami [--json]                who the stored token belongs to, and whether it still works
  platform capabilities list [--json]     list the account's capabilities
  platform plugins pack <dir> [--out f]    make a .npack of a plugin folder
  platform plugins upload <file.npack>    upload it (prints capability, version, files processed, warnings)
  platform plugins list [--json]          the account's plugins and their versions
  platform plugins activate <id> <n>      make version n of a plugin the one that serves
  platform cluster up [--nodes 3]         start N local nodes on PostgreSQL and NATS (Ctrl-C stops them)
  platform cluster status [--json]        members, shards per node, lease ages, active actors
${AUTONOMY_USAGE}
${FILES_USAGE}
${SKILLS_USAGE}
${WORKFLOWS_USAGE}
${BUILDS_USAGE}
${GATEWAYS_USAGE}
${AGENTS_USAGE}
${AGENT_SEND_USAGE}
${TASKS_USAGE}
${MODEL_USAGE}
${VIZ_USAGE}
${ADMIN_USAGE}
`;

async function main(argv: string[]) {
  const [command, ...rest] = argv;
  switch (command) {
    case 'serve':
      return serveCli();
    case 'admin':
      return adminCli(rest);
    case 'login':
      return loginCli(rest);
    case 'logout':
      return logoutCli(rest);
    case 'whoami':
      return whoamiCli(rest);
    case 'capabilities':
      return capabilitiesCli(rest);
    case 'autonomy':
      return autonomyCli(rest);
    case 'viz':
      return vizCli(rest);
    case 'cluster':
      return clusterCli(rest);
    case 'plugins':
      return pluginsCli(rest);
    case 'gateways':
      return gatewaysCli(rest);
    case 'agents':
      if (rest[0] === 'send') return agentSendCli(rest.slice(1));
      if (rest[0] === 'files' || rest[0] === 'cat' || rest[0] === 'quota') return agentHomeCli(rest);
      if (rest[0] === 'skills') return agentSkillsCli(rest.slice(1));
      if (rest[0] !== 'list' && rest[0] !== 'show') throw new UsageError(`platform agents: expected list, show, send, files, cat, quota or skills\n${AGENTS_USAGE}\n${AGENT_SEND_USAGE}\n${FILES_USAGE}`);
      return agentsCli(rest);
    case 'builds':
      return buildsCli(rest);
    case 'workflows':
      return workflowsCli(rest);
    case 'runs':
      return runsCli(rest);
    case 'skills':
      return skillsCli(rest);
    case 'attachments':
      return attachmentsCli(rest);
    case 'files':
      return filesCli(rest);
    case 'identity':
      return identityCli(rest);
    case 'tasks':
      return tasksCli(rest);
    case 'model':
      return modelCli(rest);
    case undefined:
    case 'help':
    case '--help':
      process.stdout.write(USAGE);
      return;
    default:
      throw new UsageError(`unknown command ${JSON.stringify(command)}\n\n${USAGE}`);
  }
}

main(process.argv.slice(2)).catch((err: unknown) => {
  const json = process.argv.includes('--json');
  if (err instanceof UsageError || (err as { code?: string }).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' || (err as { code?: string }).code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exit(2);
  }
  if (err instanceof ConfigError) {
    process.stderr.write(`${err.message}\n`);
    process.exit(2);
  }
  if (err instanceof CommandError) {
    if (json) process.stdout.write(`${JSON.stringify({ error: { code: err.code, message: err.message } })}\n`);
    process.stderr.write(`error: ${err.message}\n`);
    process.exit(1);
  }
  process.stderr.write(`error: ${(err as Error)?.stack ?? String(err)}\n`);
  process.exit(1);
});
