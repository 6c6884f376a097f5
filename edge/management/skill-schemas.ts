import { Type, type Static } from 'typebox';
import { SKILL_LIMITS, SKILL_NAME_PATTERN } from '../../runtime/index.ts';
import { component, data, DEFAULT_LIMIT, MAX_LIMIT, Text, Timestamp, Uuid } from './schemas.ts';
import { PATTERNS } from './validation.ts';

/**
 * Wire shapes of the skill routes (spec §1 Skills; the fields are "not shown", docs/skills.md describes them). The
 * schemas bound what can be checked from the request alone; the bundle's own rules (SKILL.md, front matter, total
 * size) are the runtime's, answered in the same error format.
 */

const Name = Type.String({ pattern: SKILL_NAME_PATTERN, maxLength: SKILL_LIMITS.nameChars, description: 'Lowercase letters, digits and hyphens (1 to 64), unique in the account.' });
const Description = Text(SKILL_LIMITS.descriptionChars, 'What the skill is for and when to use it: agents read it to decide.');

const SkillSchema = Type.Object(
  {
    id: Uuid('The skill id.'),
    name: Type.String(),
    description: Type.String(),
    version: Type.Integer({ minimum: 1, description: 'Counts the changes: 1 when created.' }),
    size: Type.Integer({ minimum: 0, description: 'Bytes of all its files.' }),
    source: Type.String({ enum: ['api', 'import', 'generate', 'builder'], description: 'How it was made.' }),
    files: Type.Array(Type.Object({ path: Type.String(), size: Type.Integer({ minimum: 0 }) }), { description: 'Its files, by path (SKILL.md among them).' }),
    created_at: Timestamp('When it was made'),
    created_by: Type.String(),
    updated_at: Timestamp('When it last changed'),
    updated_by: Type.String(),
  },
  { $id: 'Skill', description: 'A SKILL.md bundle agents bound to it read on demand.' },
);
export type SkillWire = Static<typeof SkillSchema>;

const FileIn = Type.Object(
  {
    path: Type.String({ minLength: 1, maxLength: SKILL_LIMITS.pathChars, pattern: PATTERNS.noNul.pattern, description: 'Relative, `/` between names; `SKILL.md` at the top is required.' }),
    content: Type.Optional(Type.String({ maxLength: SKILL_LIMITS.bundleBytes, description: 'The file as UTF-8 text.' })),
    content_base64: Type.Optional(Type.String({ maxLength: Math.ceil(SKILL_LIMITS.bundleBytes / 3) * 4, description: 'The file as base64 (binary files).' })),
  },
  { additionalProperties: false },
);
const Files = Type.Array(FileIn, { minItems: 1, maxItems: SKILL_LIMITS.files, description: `At most ${SKILL_LIMITS.files} files and ${SKILL_LIMITS.bundleBytes} bytes together; each with \`content\` or \`content_base64\`.` });

export const SkillCreateBody = Type.Object(
  {
    name: Type.Optional(Name),
    description: Type.Optional(Description),
    files: Files,
  },
  { additionalProperties: false, description: "The bundle; `name` and `description` default to SKILL.md's front matter." },
);
export const SkillUpdateBody = Type.Object(
  { name: Type.Optional(Name), description: Type.Optional(Description), files: Type.Optional(Files) },
  { additionalProperties: false, description: 'What changes; `files` replaces the whole bundle.' },
);
export const SkillContentBody = Type.Object({ files: Files }, { additionalProperties: false });
export const SkillPath = Type.Object({ id: Uuid('The skill id.') });
export const SkillBindingPath = Type.Object({ id: Uuid('The skill id.'), agent_id: Uuid('The agent id.') });
export const SkillListQuery = Type.Object({
  search: Type.Optional(Text(200, 'Only skills whose name or description contains this (case-insensitive).')),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT, description: 'Page size.' })),
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0 })),
});

export const OneSkill = data(component(SkillSchema), 'The skill.');
export const SkillList = data(
  Type.Object({ skills: Type.Array(component(SkillSchema)), total: Type.Integer({ minimum: 0 }), limit: Type.Integer(), offset: Type.Integer() }),
  "A page of the account's skills, by name.",
);
export const AgentSkills = data(Type.Object({ skills: Type.Array(component(SkillSchema)) }), 'The skills bound to the agent, by name.');
export const SkillContent = data(
  Type.Object({
    files: Type.Array(
      Type.Object({
        path: Type.String(),
        size: Type.Integer({ minimum: 0 }),
        content: Type.Optional(Type.String({ description: 'The file, when it is UTF-8 text.' })),
        content_base64: Type.Optional(Type.String({ description: 'The file as base64, when it is not UTF-8 text.' })),
      }),
    ),
  }),
  "The skill's bundle.",
);
export const SkillBindings = data(
  Type.Object({ bindings: Type.Array(Type.Object({ agent_id: Type.String(), bound_at: Timestamp('When it was bound'), bound_by: Type.String() })) }),
  'The agents the skill is bound to.',
);
export const SkillBound = data(Type.Object({ skill_id: Type.String(), agent_id: Type.String(), changed: Type.Boolean({ description: 'False when it was so already.' }) }), 'The binding as it now is.');

export const SkillImportUrlBody = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 2048, format: 'uri', description: 'An https URL of a `.tar.gz` whose top holds SKILL.md, or of a SKILL.md; fetched through the egress rules.' }),
    name: Type.Optional(Name),
    description: Type.Optional(Description),
  },
  { additionalProperties: false },
);
export const SkillImportForm = Type.Object(
  {
    archive: Type.String({ format: 'binary', description: 'A `.tar.gz` whose top (or one top directory) holds SKILL.md, or a SKILL.md; at most 1 MiB.' }),
    name: Type.Optional(Type.String()),
    description: Type.Optional(Type.String()),
  },
  { description: 'multipart/form-data' },
);
export const SkillGenerateBody = Type.Object(
  {
    agent_id: Uuid("The agent whose model drafts the skill."),
    name: Name,
    purpose: Type.String({ minLength: 1, maxLength: 4000, pattern: PATTERNS.noNul.pattern, description: 'What the skill is for: the model drafts its instructions from it.' }),
    description: Type.Optional(Description),
  },
  { additionalProperties: false },
);

export const SKILL_COMPONENTS = [SkillSchema];
