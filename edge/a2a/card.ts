import { createHash } from 'node:crypto';
import type { AgentRecord } from '../../store/index.ts';
import type { AgentCard, AgentExtension } from './schemas.ts';

/**
 * The agent card (spec §4.3), exactly the spec's table: what is not set is left out, never null; no tools, models
 * or limits. `securityRequirements` takes the spec's form `[{bearer: []}]` rather than ProtoJSON's
 * `[{schemes: {bearer: {list: []}}}]` (decided in the A2A notes; strict A2A 1.0 parsers read it as "no requirement",
 * which the README says).
 */

/** The fixed provider of every card (spec §4.3: a fixed organization name and url). */
export const PROVIDER = { organization: 'Platform', url: 'https://github.com/platform/agent-platform' } as const;

/** Where the platform's extension URIs live (`{ext_base}` of spec §4.3): under the provider's url. */
export const EXT_BASE = PROVIDER.url;
export const EXTENSIONS = {
  a2ui: `${EXT_BASE}/ext/a2ui/v1`,
  approvalGate: `${EXT_BASE}/ext/approval-gate/v1`,
} as const;

/** The two extensions every card offers; neither is required (spec §4.3). */
export const CARD_EXTENSIONS: readonly AgentExtension[] = [
  { uri: EXTENSIONS.a2ui, description: 'Generative UI: artifacts may carry A2UI payloads, tagged with this URI when negotiated.', required: false },
  { uri: EXTENSIONS.approvalGate, description: 'Approval gates: input-required messages carry platform.gate_decision payloads, resolved by a follow-up SendMessage.', required: false },
];

/** Clients may keep a card five minutes, then revalidate it with its ETag. */
export const CARD_CACHE_CONTROL = 'public, max-age=300';

export function agentCard(agent: Pick<AgentRecord, 'name' | 'description'>, origin: string): AgentCard {
  return {
    name: agent.name,
    description: agent.description,
    supportedInterfaces: [{ url: origin, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
    provider: { ...PROVIDER },
    version: '1.0.0',
    capabilities: { streaming: true, pushNotifications: true, extensions: CARD_EXTENSIONS.map((e) => ({ ...e })) },
    securitySchemes: {
      bearer: { httpAuthSecurityScheme: { scheme: 'Bearer', description: "A service principal's API key (ak-...) or an agent token whose audience is urn:platform:agent:{id}" } },
    },
    securityRequirements: [{ bearer: [] }],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [],
  };
}

/** A strong validator of the card's exact bytes: any change to the card changes it. */
export const cardEtag = (body: string) => `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;

/**
 * Whether `If-None-Match` already names the current card (RFC 9110 §13.1.2: weak comparison, `*` matches any).
 */
export function notModified(ifNoneMatch: string | string[] | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  const value = Array.isArray(ifNoneMatch) ? ifNoneMatch.join(',') : ifNoneMatch;
  if (value.trim() === '*') return true;
  const opaque = etag.replace(/^W\//, '');
  return value.split(',').some((tag) => tag.trim().replace(/^W\//, '') === opaque);
}
