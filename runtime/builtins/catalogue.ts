import type { Builtin } from './builtin.ts';
import { BROWSER } from './browser.ts';
import { CODE_RUNNER } from './code-runner.ts';
import { FILES } from './files.ts';
import { JOURNAL } from './journal.ts';
import { MEMORY } from './memory.ts';
import { SCHEDULER } from './scheduler.ts';
import { FORMS } from './forms.ts';
import { SANDBOX } from './sandbox.ts';
import { WEB_SEARCH } from './web-search.ts';
import { PLUGIN_BUILDER, SKILL_BUILDER, WORKFLOW_BUILDER } from './builders.ts';

/**
 * The built-ins this platform ships, in their sort order. A kind of spec §2 that is not here is not offered (the
 * README says which and why): a capability listed is one that runs.
 */
export const BUILTINS: readonly Builtin[] = [FILES, MEMORY, JOURNAL, SCHEDULER, FORMS, CODE_RUNNER, SANDBOX, WEB_SEARCH, BROWSER, PLUGIN_BUILDER, SKILL_BUILDER, WORKFLOW_BUILDER].sort((a, b) => a.sortOrder - b.sortOrder);

const byId = new Map(BUILTINS.map((b) => [b.id, b]));

/** A built-in by its fixed id (`builtin-files`), its namespace (`file`) or its kind (`Files`, any case). */
export function findBuiltin(ref: string): Builtin | undefined {
  const r = ref.trim().toLowerCase();
  return byId.get(r) ?? BUILTINS.find((b) => b.namespace === r || b.kind.toLowerCase() === r || b.id === `builtin-${r.replace(/\s+/g, '-')}`);
}
