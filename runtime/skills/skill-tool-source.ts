import type { SkillRecord, Store } from '../../store/index.ts';
import { SUBJECTS } from '../core/subjects/index.ts';
import type { BindingTarget, ToolEntry, ToolResult, ToolSource } from '../tools/index.ts';
import { SKILL_MD } from './skill-bundle.ts';
import { skillFileBytes } from './skills.ts';

export const READ_SKILL = 'read_skill';
export const LIST_SKILLS = 'list_skills';

const fail = (message: string): ToolResult => ({ isError: true, kind: 'error', message });

/** The line of a skill in the agent's instructions and in the tool's description. */
const line = (s: SkillRecord) => `- ${s.name}: ${s.description.replace(/\s+/g, ' ')}`;

/**
 * The skills bound to an agent, as the agent loop uses them: they shape its instructions (each skill's name and
 * description, so the model knows when one applies) and are read on demand: `list_skills` names them with their
 * files, `read_skill` reads the SKILL.md first, then any file it refers to. The model loads a skill's instructions
 * when a task needs them rather than carrying every skill in its prompt. Agents only: the family never appears on an
 * MCP gateway.
 */
export function skillToolSource(deps: { store: Pick<Store, 'skills' | 'blobs'> }): ToolSource {
  return {
    changedOn: [SUBJECTS.skillsChanged],
    async tools(target: BindingTarget): Promise<ToolEntry[]> {
      if (target.kind !== 'agent') return [];
      const skills = await deps.store.skills.ofAgent(target.accountId, target.id);
      if (skills.length === 0) return [];
      const byName = new Map(skills.map((s) => [s.name, s]));
      return [
        {
          name: LIST_SKILLS,
          description: `List your skills: each one's name, description and files (with sizes in bytes). Read one with ${READ_SKILL}.`,
          inputSchema: { type: 'object', properties: {}, additionalProperties: false },
          readOnly: true,
          requiresAnchor: false,
          origin: { kind: 'builtin', family: 'skills_read', operation: LIST_SKILLS },
          async invoke(): Promise<ToolResult> {
            // Read when called: the bundle may have changed since the list was cached (a new version keeps its name).
            const current = await deps.store.skills.ofAgent(target.accountId, target.id);
            const sizes = await deps.store.skills.sizes(target.accountId, current.map((s) => s.id));
            return { isError: false, value: { skills: current.map((s) => ({ name: s.name, description: s.description, version: s.version, files: sizes.get(s.id) ?? [] })) } };
          },
        },
        {
          name: READ_SKILL,
          description: `Read one of your skills: its ${SKILL_MD} (the instructions; read it before doing a task it covers), or a file it names. Your skills:\n${skills.map(line).join('\n')}`,
          inputSchema: {
            type: 'object',
            properties: {
              skill: { type: 'string', enum: skills.map((s) => s.name), description: 'The skill.' },
              path: { type: 'string', description: `A file of the skill; ${SKILL_MD} when omitted.` },
            },
            required: ['skill'],
            additionalProperties: false,
          },
          readOnly: true,
          requiresAnchor: false,
          origin: { kind: 'builtin', family: 'skills_read', operation: READ_SKILL },
          instructions: `You have skills: instructions for kinds of tasks. Before doing a task one of them covers, read it with ${READ_SKILL}.\n${skills.map(line).join('\n')}`,
          async invoke(_caller, args): Promise<ToolResult> {
            const a = (args ?? {}) as { skill?: unknown; path?: unknown };
            const skill = typeof a.skill === 'string' ? byName.get(a.skill) : undefined;
            if (!skill) return fail(`no skill ${JSON.stringify(a.skill)}; your skills are ${[...byName.keys()].join(', ')}`);
            const path = a.path === undefined ? SKILL_MD : a.path;
            if (typeof path !== 'string') return fail('path must be text');
            const ref = await deps.store.skills.file(target.accountId, skill.id, path);
            if (!ref) {
              const files = (await deps.store.skills.files(target.accountId, skill.id)).map((f) => f.path);
              return fail(`the skill ${skill.name} has no file ${JSON.stringify(path)}; its files: ${files.join(', ')}`);
            }
            return { isError: false, value: (await skillFileBytes(deps.store, ref)).toString('utf8') };
          },
        },
      ];
    },
  };
}
