import { parse as parseYaml } from 'yaml';
import { PlatformError } from '../core/errors/index.ts';

/**
 * A skill's bundle: `SKILL.md` (YAML front matter with `name` and `description`, then the instructions) and the files
 * it refers to. Limits are checked from lengths before anything is decoded or parsed; the front matter is capped, so
 * reading it takes well under a millisecond on the node's thread (DESIGN §5), and YAML aliases are bounded by the
 * parser's own cap.
 */
export const SKILL_LIMITS = {
  /** Every file together, decoded. */
  bundleBytes: 512 * 1024,
  files: 64,
  skillMdBytes: 256 * 1024,
  frontMatterBytes: 8 * 1024,
  /** Names as agent skills have them: lowercase letters, digits and hyphens. */
  nameChars: 64,
  descriptionChars: 1024,
  pathChars: 256,
  pathDepth: 8,
} as const;

export const SKILL_NAME = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;
export const SKILL_NAME_PATTERN = SKILL_NAME.source;
export const SKILL_MD = 'SKILL.md';

export interface BundleFile {
  path: string;
  content: Buffer;
}

export interface Bundle {
  name: string;
  description: string;
  files: BundleFile[];
  size: number;
}

const invalid = (message: string) => new PlatformError('SKILL_INVALID', message);

/** A path inside a bundle: relative, `/` between names, no `.`/`..` segments, no NUL or backslash, bounded. */
export function checkBundlePath(p: string, where: string): string {
  if (p.length === 0 || p.length > SKILL_LIMITS.pathChars) throw invalid(`${where}: a path is 1 to ${SKILL_LIMITS.pathChars} characters`);
  const parts = p.split('/');
  if (p.startsWith('/') || p.includes('\\') || p.includes('\0') || parts.some((s) => s === '' || s === '.' || s === '..')) {
    throw invalid(`${where}: ${JSON.stringify(p.slice(0, 100))} must be relative, with / between names and no . or .. segments`);
  }
  if (parts.length > SKILL_LIMITS.pathDepth) throw invalid(`${where}: at most ${SKILL_LIMITS.pathDepth} directories deep`);
  return p;
}

/** `name` and `description` from SKILL.md's front matter (either may be missing); the text must start with `---`. */
export function frontMatter(skillMd: string): { name?: string; description?: string } {
  if (!skillMd.startsWith('---\n') && !skillMd.startsWith('---\r\n')) return {};
  const end = skillMd.indexOf('\n---', 3);
  if (end < 0) throw invalid(`${SKILL_MD}: its front matter opens with --- and never closes`);
  if (end > SKILL_LIMITS.frontMatterBytes) throw invalid(`${SKILL_MD}: its front matter is longer than ${SKILL_LIMITS.frontMatterBytes} characters`);
  let doc: unknown;
  try {
    doc = parseYaml(skillMd.slice(skillMd.indexOf('\n') + 1, end), { maxAliasCount: 10 });
  } catch (err) {
    throw invalid(`${SKILL_MD}: its front matter is not YAML: ${(err as Error).message.split('\n')[0]}`);
  }
  if (doc === null || doc === undefined) return {};
  if (typeof doc !== 'object' || Array.isArray(doc)) throw invalid(`${SKILL_MD}: its front matter must be a mapping (name: ..., description: ...)`);
  const { name, description } = doc as Record<string, unknown>;
  if (name !== undefined && typeof name !== 'string') throw invalid(`${SKILL_MD}: name must be text`);
  if (description !== undefined && typeof description !== 'string') throw invalid(`${SKILL_MD}: description must be text`);
  return { ...(name !== undefined ? { name } : {}), ...(description !== undefined ? { description: description.trim() } : {}) };
}

/**
 * A bundle from its files, checked: SKILL.md present and UTF-8, every limit, paths unique; the name and description
 * given (`over`) win over the front matter's, and the result must have both. An invalid bundle is SKILL_INVALID
 * naming the problem; one over a size limit SKILL_TOO_LARGE.
 */
export function makeBundle(files: readonly BundleFile[], over: { name?: string; description?: string } = {}): Bundle {
  if (files.length > SKILL_LIMITS.files) throw new PlatformError('SKILL_TOO_LARGE', `a skill has at most ${SKILL_LIMITS.files} files; this one has ${files.length}`);
  let size = 0;
  const seen = new Set<string>();
  for (const f of files) {
    checkBundlePath(f.path, 'files');
    if (seen.has(f.path)) throw invalid(`files: ${JSON.stringify(f.path)} is given twice`);
    seen.add(f.path);
    size += f.content.length;
  }
  if (size > SKILL_LIMITS.bundleBytes) throw new PlatformError('SKILL_TOO_LARGE', `a skill's files are at most ${SKILL_LIMITS.bundleBytes} bytes together; these are ${size}`);
  const md = files.find((f) => f.path === SKILL_MD);
  if (!md) throw invalid(`a skill needs a ${SKILL_MD} at the top of its bundle`);
  if (md.content.length > SKILL_LIMITS.skillMdBytes) throw new PlatformError('SKILL_TOO_LARGE', `${SKILL_MD} is at most ${SKILL_LIMITS.skillMdBytes} bytes`);
  const text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });
  let skillMd: string;
  try {
    skillMd = text.decode(md.content);
  } catch {
    throw invalid(`${SKILL_MD} is not UTF-8 text`);
  }
  const fm = frontMatter(skillMd);
  const name = over.name ?? fm.name;
  const description = over.description ?? fm.description;
  if (name === undefined) throw invalid(`the skill needs a name: give "name", or name: in ${SKILL_MD}'s front matter`);
  checkName(name);
  if (!description) throw invalid(`the skill needs a description: give "description", or description: in ${SKILL_MD}'s front matter (what it is for and when to use it)`);
  checkDescription(description);
  const sorted = [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { name, description, files: sorted, size };
}

export function checkName(name: string): void {
  if (!SKILL_NAME.test(name)) throw invalid(`name ${JSON.stringify(name.slice(0, 100))}: 1 to ${SKILL_LIMITS.nameChars} lowercase letters, digits and hyphens, starting and ending with a letter or digit`);
}

export function checkDescription(description: string): void {
  if (description.length > SKILL_LIMITS.descriptionChars || description.includes('\0')) throw invalid(`description: at most ${SKILL_LIMITS.descriptionChars} characters, no NUL`);
}
