import { Type } from 'typebox';
import { CONDITION_OPS, POLICY_LIMITS, POLICY_MODES } from '../../runtime/index.ts';
import { component } from './schemas.ts';
import { PATTERNS } from './validation.ts';

/**
 * Wire shapes of the autonomy routes (spec §1 Autonomy; the spec leaves their fields open, docs/autonomy.md
 * describes them). The request schema checks the document's shape and limits; the runtime checks what depends on
 * an operator (the type of a condition's value) and the document's size, and answers in the same error format.
 */

const NO_NUL = PATTERNS.noNul.pattern;
const Uuid = (description: string) => Type.String({ format: 'uuid', pattern: PATTERNS.uuid.pattern, description });
const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);

const Condition = Type.Object({
  path: Type.String({ minLength: 1, maxLength: POLICY_LIMITS.pathLength, pattern: NO_NUL, description: `Dot-separated keys into the arguments; a decimal segment indexes an array. At most ${POLICY_LIMITS.pathSegments} segments.`, examples: ['path', 'items.0.name'] }),
  op: Type.String({ enum: [...CONDITION_OPS], description: 'equals and one_of compare scalars; min and max bound numbers; prefix matches the start of a string; max_length bounds a string (characters) or an array (items).' }),
  value: Type.Unknown({ description: `A string (at most ${POLICY_LIMITS.text} characters), number, boolean or null; for one_of an array of 1 to ${POLICY_LIMITS.oneOf} of them; a number for min, max and max_length; a string for prefix.` }),
  otherwise: Type.String({ enum: ['deny', 'ask'], description: 'What a call whose argument fails the condition gets (deny wins over ask when several fail).' }),
});

const Rule = Type.Object({
  tool: Type.String({ pattern: PATTERNS.toolName.pattern, description: 'A tool name as the surfaces list it, or `*` for every tool the policy does not name.' }),
  mode: Type.String({ enum: [...POLICY_MODES], description: 'allow, deny, ask (a human decides; refused on MCP), or may_deny_on_args (decided by the conditions).' }),
  reason: Type.Optional(Type.String({ maxLength: POLICY_LIMITS.reason, pattern: NO_NUL, description: 'Why the rule exists: given with denials and recorded with decisions.' })),
  conditions: Type.Optional(Type.Array(Condition, { minItems: 1, maxItems: POLICY_LIMITS.conditions, description: 'With may_deny_on_args only: the call is allowed when every condition holds.' })),
});

export const PolicyDocumentBody = Type.Object(
  { rules: Type.Array(Rule, { maxItems: POLICY_LIMITS.rules, description: `At most ${POLICY_LIMITS.rules} rules, one per tool; the document at most ${POLICY_LIMITS.documentBytes} bytes as JSON.` }) },
  { description: 'The whole policy of the scope: it replaces what was there (an empty list clears it).' },
);

export const AutonomyPolicySchema = Type.Object(
  {
    scope: Type.String({ enum: ['account', 'agent', 'user'] }),
    subject_id: Nullable(Type.String({ description: 'The agent or principal id; null for the account scope.' })),
    rules: Type.Array(Rule),
    version: Type.Integer({ minimum: 0, description: 'Counts the times the policy was set; 0 when it never was.' }),
    updated_at: Nullable(Type.String({ format: 'date-time', description: 'Last set (ISO 8601, UTC).' })),
    updated_by: Nullable(Type.String({ description: 'The principal who last set it.' })),
  },
  { $id: 'AutonomyPolicy', description: 'The autonomy policy of one scope (docs/autonomy.md).' },
);
export const OnePolicy = Type.Object({ data: component(AutonomyPolicySchema) }, { description: 'The policy.' });

export const AgentPath = Type.Object({ agent_id: Uuid('The agent id.') });
export const PrincipalPath = Type.Object({ principal_id: Uuid('The principal (user or service) id.') });

export const AutonomyDecisionSchema = Type.Object(
  {
    id: Type.String(),
    principal_id: Type.String({ description: 'Who called: a principal id, or `anonymous` on a public gateway.' }),
    tool: Type.String(),
    arguments_hash: Type.String({ description: '`sha256:<hex>` of the arguments as canonical JSON (keys sorted, no whitespace).' }),
    outcome: Type.String({ enum: ['allow', 'deny', 'ask'] }),
    reason: Nullable(Type.String()),
    decided_by: Type.String({ enum: ['policy', 'human'] }),
    surface: Type.String({ enum: ['mcp', 'agent'] }),
    target: Type.Object({ kind: Type.String({ enum: ['gateway', 'agent'] }), id: Type.String() }, { description: 'Where the tool is bound.' }),
    gate_id: Nullable(Type.String({ description: 'The approval gate a human decided, if any.' })),
    created_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'AutonomyDecision', description: 'One decision on one tool call.' },
);

export const DECISIONS_DEFAULT_LIMIT = 50;
export const DecisionQuery = Type.Object({
  agent_id: Type.Optional(Uuid('Only calls of tools bound to this agent.')),
  gateway_id: Type.Optional(Uuid('Only calls through this MCP gateway.')),
  principal_id: Type.Optional(Type.String({ maxLength: 100, pattern: NO_NUL, description: 'Only calls by this principal (`anonymous` for public gateways).' })),
  tool: Type.Optional(Type.String({ maxLength: 128, pattern: NO_NUL, description: 'Only calls of this tool.' })),
  outcome: Type.Optional(Type.String({ enum: ['allow', 'deny', 'ask'], description: 'Only decisions with this outcome.' })),
  since: Type.Optional(Type.String({ format: 'date-time', description: 'Only decisions at or after this time (ISO 8601).' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: DECISIONS_DEFAULT_LIMIT, description: 'Page size.' })),
  cursor: Type.Optional(Type.String({ maxLength: 40, pattern: PATTERNS.cursor.pattern, description: 'The `next_cursor` of the previous page.' })),
});

export const DecisionList = Type.Object(
  {
    data: Type.Object({
      decisions: Type.Array(component(AutonomyDecisionSchema)),
      next_cursor: Nullable(Type.String({ description: 'Pass it as `cursor` for the next (older) page; null on the last.' })),
    }),
  },
  { description: 'Decisions, newest first.' },
);

export const AUTONOMY_COMPONENTS = [AutonomyPolicySchema, AutonomyDecisionSchema];
