export { createSkills, skillFileBytes, DRAFT_PROMPT, type Skills, type SkillActor } from './skills.ts';
export { skillToolSource, READ_SKILL } from './skill-tool-source.ts';
export { makeBundle, SKILL_LIMITS, SKILL_MD, SKILL_NAME_PATTERN, type Bundle, type BundleFile } from './skill-bundle.ts';
export { readSkillArchive, SKILL_ARCHIVE_BYTES } from './skill-archive.ts';
