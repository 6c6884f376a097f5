/** Protocol revisions the gateway speaks, oldest first. */
export const KNOWN_VERSIONS = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25', '2026-07-28'] as const;
export const FALLBACK_VERSION = '2025-11-25';
/** From this revision on the transport is stateless: no sessions, per-request version and method headers. */
export const MODERN_VERSION = '2026-07-28';
/** What a request without MCP-Protocol-Version is taken to speak (2025-11-25 transports). */
export const HEADERLESS_VERSION = '2025-03-26';

export const PROTOCOL_VERSION_META = 'io.modelcontextprotocol/protocolVersion';
export const CLIENT_CAPABILITIES_META = 'io.modelcontextprotocol/clientCapabilities';
export const SERVER_INFO_META = 'io.modelcontextprotocol/serverInfo';

export const isKnown = (v: unknown): v is string => typeof v === 'string' && (KNOWN_VERSIONS as readonly string[]).includes(v);
export const isModern = (v: string) => v >= MODERN_VERSION;

/** Version negotiation: echo a version we recognize, else fall back to 2025-11-25. */
export const negotiate = (requested: unknown): string => (isKnown(requested) ? requested : FALLBACK_VERSION);

/** The fixed provider strings of serverInfo. */
export const SERVER_INFO = {
  name: 'platform-mcp-gateway',
  title: 'Platform MCP Gateway',
  version: '1.0.0',
  websiteUrl: 'https://github.com/platform/agent-platform',
} as const;

/** Lists are per caller, so a cached page is private to it; pages are reusable for five minutes. */
export const LIST_TTL_MS = 300_000;
export const CACHE_SCOPE = 'private';
export const PAGE_SIZE = 50;
export const REQUEST_TIMEOUT_MS = 240_000;
export const BODY_LIMIT = 4 * 1024 * 1024;
export const SESSION_TTL_MS = 7 * 24 * 3600 * 1000;
