/**
 * Which built-in tools an MCP gateway may show, and which need a workspace anchor (spec §4.2). Built-ins are tool
 * families the platform provides (each a source of the tool registry); these rules hold for every family whatever
 * source provides it, so a built-in that ships later is listed, withheld or refused by them without further code.
 */
export type BuiltinFamily =
  | 'files'
  | 'sandbox'
  | 'browser'
  | 'computer'
  | 'web_search'
  | 'code_runner'
  | 'memory'
  | 'plugin_builder'
  | 'skill_builder'
  | 'workflow_builder'
  // Agent-side families: they exist for agents, never on an MCP gateway.
  | 'skills_read'
  | 'journal'
  | 'scheduling'
  | 'forms';

interface FamilyRule {
  /** Listed and callable on MCP gateways. */
  mcp: boolean;
  /** Operations that need the caller's workspace anchor: all of them, none, or the ones named. */
  anchored: 'all' | 'none' | readonly string[];
}

export const BUILTIN_RULES: Readonly<Record<BuiltinFamily, FamilyRule>> = {
  files: { mcp: true, anchored: 'all' },
  sandbox: { mcp: true, anchored: 'all' },
  // Pages are fetched for anyone; captures of a browsing session belong to a workspace.
  browser: { mcp: true, anchored: ['screenshot', 'pdf', 'snapshot'] },
  computer: { mcp: false, anchored: 'all' },
  web_search: { mcp: true, anchored: 'none' },
  code_runner: { mcp: true, anchored: 'none' },
  memory: { mcp: true, anchored: 'none' },
  plugin_builder: { mcp: true, anchored: 'none' },
  skill_builder: { mcp: true, anchored: 'none' },
  workflow_builder: { mcp: true, anchored: 'none' },
  skills_read: { mcp: false, anchored: 'none' },
  journal: { mcp: false, anchored: 'none' },
  scheduling: { mcp: false, anchored: 'none' },
  forms: { mcp: false, anchored: 'none' },
};

export const onMcpGateway = (family: BuiltinFamily): boolean => BUILTIN_RULES[family].mcp;

export function builtinNeedsAnchor(family: BuiltinFamily, operation: string): boolean {
  const a = BUILTIN_RULES[family].anchored;
  return a === 'all' ? true : a === 'none' ? false : a.includes(operation);
}
