/**
 * Every client command's usage lines, in one module that imports nothing: `platform help` and a mistake's hint print
 * them without loading the command modules (and the packages they pull in, undici first), so help starts as fast as
 * the CLI itself. Each command module imports its own lines from here. (The operator commands' lines are built from
 * their table in admin-commands.ts, which is as light.)
 */

/** One usage entry: the command, then its description in a column (past it when the command is longer). */
const entry = (command: string, description: string) => `  ${command.padEnd(64)}  ${description}`;

export const WORKFLOWS_USAGE = `  platform workflows list [--json]                       the account's workflows (the operator writes them)
  platform workflows show <id> [--json]                  one, with its definition
  platform workflows attach|detach <id> (--agent <agent-id> | --gateway <gateway-id>) [--json]
  platform workflows attached (--agent <agent-id> | --gateway <gateway-id>) [--json]
  platform runs start <workflow-id> [--input <json|@file>] [--agent <id> | --gateway <id>] [--json]
  platform runs list [--workflow <id>] [--status s] [--limit n] [--cursor c] [--json]
  platform runs show <run-id> [--json]
  platform runs cancel <run-id> [--json]
  platform runs approve|deny <run-id> [--json]           decide the approval step the run waits on
  platform runs signal <run-id> <signal> [--payload <json>] [--json]`;

export const PLUGINS_USAGE = [
  entry('platform plugins init <dir> --lang js|wat [--name n] [--json]', 'a new plugin folder (platform.yaml, wit/, src/, README) that builds offline'),
  entry('platform plugins build [<dir>] [--world w] [--json]', 'build its component into dist/<name>.wasm; lists the tools it will have'),
  entry('platform plugins pack [<dir>] [--out f.npack] [--json]', 'a .npack of the component, platform.yaml, .env and wit/ (its layout kept)'),
  entry('platform plugins upload <file.npack> [--no-wait] [--json]', 'upload it; waits until the version is active, or says why not'),
  entry('platform plugins deploy [<dir>] [--bind-gateway <id|handle>] [--bind-agent <id|handle>] [--json]', 'build, pack, upload, wait until active, bind (an operator command)'),
  entry('platform plugins list [--json]', "the account's plugins and their versions"),
  entry('platform plugins activate <capability-id> <version> [--json]', 'make that version the one that serves (a rollback)'),
].join('\n');

export const SKILLS_USAGE = `  platform skills list [--search s] [--limit n] [--offset n] [--json]
  platform skills show <id> [--json]                     a skill and its files
  platform skills create --dir <folder> [--name n] [--description d] [--json]   from a folder holding SKILL.md
  platform skills update <id> [--dir <folder>] [--name n] [--description d] [--json]
  platform skills delete <id>
  platform skills content <id> [--json]                  the bundle's files
  platform skills bind|unbind <id> --agent <agent-id> [--json]
  platform skills import (--file <x.tar.gz|SKILL.md> | --url <url>) [--name n] [--description d] [--json]
  platform skills generate --agent <agent-id> --name n --purpose "..." [--description d] [--json]
  platform agents skills <agent-id> [--json]             the skills bound to an agent`;

export const AUTONOMY_USAGE = `  platform autonomy get [--agent <id> | --user <id>] [--json]          the policy of the account, an agent or a user
  platform autonomy set [--agent <id> | --user <id>] --file <policy.json|-> [--json]
                                                        replace it with {"rules": [...]} (docs/autonomy.md)
  platform autonomy decisions [--agent <id> | --gateway <id>] [--user <id>] [--tool t] [--outcome allow|deny|ask]
                              [--since <ISO time>] [--limit n] [--cursor c] [--json]   the decision history, newest first`;

export const FILES_USAGE = `  platform attachments list [--task <id>] [--context <id>] [--limit n] [--cursor c] [--json]   files sent to agents
  platform attachments quota [--json]                    the account's attachment quota
  platform attachments url <id> [--expires-in <seconds>] [--json]   a new presigned URL of one
  platform files get <id> [--out <file>]                 download a file (GET /v1/files/{id}, following its redirect)
  platform agents files <agent-id> [--path p] [--principal <id>] [--json]   browse the agent's home directory
  platform agents cat <agent-id> <path> [--principal <id>] [--out <file>]    read a file of it
  platform agents quota <agent-id> [--principal <id>] [--json]               what the home holds against its limits
  platform agents journal <agent-id> [--principal <id>] [--thread <id>] [--kind did|decided|remember|note]
                          [--query q] [--since <ISO time>] [--until <ISO time>] [--limit n] [--cursor c] [--json]
                                                         the agent's journal for you (or a principal), newest first
  platform agents journal-delete <agent-id> <entry-id> [--principal <id>]   remove an entry of it
  platform identity link-code --provider p --external-id x [--display-name n] [--json]   (service principals)
  platform identity verify <code> [--json]               link the code's outside identity to yourself
  platform identity links [--provider p] [--external-id x] [--principal <id>] [--json]`;

export const DEV_CERT_USAGE = `  platform dev-cert [--dir DIR] [--handle H]... [--json]   make a local CA and an HTTPS certificate for this domain's hosts (docs/https.md)`;

export const AGENT_SEND_USAGE = `  platform agents send <handle> <text> [--context <id>] [--task <id>] [--key <credential>] [--url <agent URL>] [--json]
                                                    send a message over the agent's A2A gateway and stream the answer`;

export const TASKS_USAGE = `  platform tasks list --agent <handle> [--context <id>] [--state <TASK_STATE_…>] [--page-size n] [--page-token t] [--json]
  platform tasks get <id> --agent <handle> [--json]     one task: state, context and its answer
  platform tasks cancel <id> --agent <handle> [--json]  cancel a running task
      (agents send and tasks take --key <credential> or PLATFORM_AGENT_KEY: a service principal's API key or an agent
       token from platform admin agent token; --url <agent URL> instead of the one on the node the CLI finds)`;

export const MODEL_USAGE = `  platform model serve [--rules f] [--port n] [--host h]   serve the scripted model (OpenAI-compatible) until Ctrl-C`;

export const VIZ_USAGE = `  platform viz export <machine> [--format svg|dot|mermaid]   print a statechart (default svg)`;

export const SCHEDULES_USAGE = `  platform schedules list [--agent <id>] [--status active|completed|canceled|failed] [--limit n] [--cursor c] [--json]
                                                         agents' schedules (yours; admins and owners: everyone's)
  platform schedules show <id> [--json]                  one schedule: next run, runs, last task
  platform schedules cancel <id> [--json]                it runs no more`;
export const TRIGGERS_USAGE = `  platform triggers list [--agent <id>] [--limit n] [--cursor c] [--json]
                                                         agents' triggers: signed webhooks, workflow runs' ends
  platform triggers show <id> [--json]                   one trigger: its url or workflow, how often it fired
  platform triggers delete <id>                          nothing starts from it again
  platform triggers rotate-secret <id> [--json]          a webhook's new signing secret (shown once)`;

export const BUILDS_USAGE = `  platform builds create --name n --source <plugin.js> --wit <world.wit> --world w [--config platform.yaml]
                         [--description d] [--wait] [--json]      build a plugin from JavaScript (componentize-js)
  platform builds list [--limit n] [--cursor c] [--json]
  platform builds show <id> [--json]                     status and logs
  platform builds cancel <id> [--json]`;
