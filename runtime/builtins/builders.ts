import { hasAuthority, type Caller } from '../identity/index.ts';
import { BuiltinToolError, type Builders, type Builtin, type BuiltinContext, type BuiltinDeps, type BuiltinOperation } from './builtin.ts';

/** The builders change what the account hosts: like the API routes they stand for, they need write authority. */
function writer(ctx: BuiltinContext, what: string): Caller {
  if (!hasAuthority(ctx.caller.role, 'write')) throw new BuiltinToolError(`${what} needs write authority (an admin or owner); the ${ctx.caller.role} role lacks it`);
  return ctx.caller;
}

const builders = (deps: BuiltinDeps): Builders => {
  if (!deps.builders) throw new BuiltinToolError('the builders are not available on this node');
  return deps.builders;
};

const pluginBuild: BuiltinOperation = {
  name: 'plugin_build',
  operation: 'build',
  description:
    'Build a plugin from JavaScript: `source` is an ES module exporting the functions of the WIT `world` declared in `wit`. The component is registered as the next version of the plugin `name` and activates itself; the answer is the build (status, capability, version, logs). A build takes tens of seconds.',
  readOnly: false,
  inputSchema: {
    type: 'object',
    properties: {
      name: { type: 'string', pattern: '^[a-z][a-z0-9-]{0,62}[a-z0-9]$' },
      source: { type: 'string', minLength: 1 },
      wit: { type: 'string', minLength: 1 },
      world: { type: 'string', pattern: '^[a-z][a-z0-9-]{0,63}$' },
      description: { type: 'string', maxLength: 1000 },
      config: { type: 'string' },
    },
    required: ['name', 'source', 'wit', 'world'],
    additionalProperties: false,
  },
  run: (deps, ctx, a) => builders(deps).buildPlugin(writer(ctx, 'building a plugin'), a as never, ctx.signal),
};

const skillSave: BuiltinOperation = {
  name: 'skill_save',
  operation: 'save',
  description: 'Create a skill, or replace the one of that name: its instructions become SKILL.md (with front matter from `name` and `description`); `files` are further files of the bundle, as text.',
  readOnly: false,
  inputSchema: {
    type: 'object',
    properties: {
      name: { type: 'string', pattern: '^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$' },
      description: { type: 'string', minLength: 1, maxLength: 1024 },
      instructions: { type: 'string', minLength: 1 },
      files: { type: 'array', maxItems: 63, items: { type: 'object', properties: { path: { type: 'string', minLength: 1 }, content: { type: 'string' } }, required: ['path', 'content'], additionalProperties: false } },
    },
    required: ['name', 'description', 'instructions'],
    additionalProperties: false,
  },
  run: (deps, ctx, a) => builders(deps).saveSkill(writer(ctx, 'saving a skill'), a as never),
};

const workflowSave: BuiltinOperation = {
  name: 'workflow_save',
  operation: 'save',
  description: 'Create a workflow, or the next version of the one of that name, from its definition: {name, description, input?, start, steps} with tool, approval, signal, timer, branch, succeed and fail steps (docs/workflows.md). An invalid definition is refused with what is wrong.',
  readOnly: false,
  inputSchema: { type: 'object', properties: { definition: { type: 'object' } }, required: ['definition'], additionalProperties: false },
  run: (deps, ctx, a) => builders(deps).saveWorkflow(writer(ctx, 'saving a workflow'), a.definition),
};

const builder = (family: Builtin['family'], kind: string, namespace: string, description: string, sortOrder: number, operations: BuiltinOperation[]): Builtin => ({
  id: `builtin-${kind.toLowerCase().replace(/\s+/g, '-')}`,
  kind,
  family,
  name: kind,
  namespace,
  description,
  sortOrder,
  config: null,
  operations,
});

export const PLUGIN_BUILDER = builder('plugin_builder', 'Plugin Builder', 'plugin', 'Builds plugins from JavaScript source (componentize-js) and registers them.', 70, [pluginBuild]);
export const SKILL_BUILDER = builder('skill_builder', 'Skill Builder', 'skill', 'Writes skills (SKILL.md bundles) for the account’s agents.', 80, [skillSave]);
export const WORKFLOW_BUILDER = builder('workflow_builder', 'Workflow Builder', 'workflow', 'Writes workflows (statecharts of steps) for the account.', 90, [workflowSave]);
