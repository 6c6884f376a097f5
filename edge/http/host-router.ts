/** Which surface a request's Host names. Gateways are addressed by handle, never by UUID. */
export type HostRoute =
  | { surface: 'management' }
  | { surface: 'mcp'; handle: string }
  | { surface: 'agent'; handle: string }
  | { surface: 'unknown' };

const LABEL = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/;

export function routeHost(hostHeader: string | undefined, domain: string): HostRoute {
  if (!hostHeader) return { surface: 'unknown' };
  // Strip the port (and IPv6 brackets) and a trailing root dot; host names compare case-insensitively.
  const host = hostHeader.trim().toLowerCase().replace(/:\d+$/, '').replace(/\.$/, '');
  if (host === domain || host === `api.${domain}`) return { surface: 'management' };
  const suffix = `.${domain}`;
  if (!host.endsWith(suffix)) return { surface: 'unknown' };
  const label = host.slice(0, -suffix.length);
  if (label.includes('.') || !LABEL.test(label)) return { surface: 'unknown' };
  if (label.startsWith('mcp-') && label.length > 4) return { surface: 'mcp', handle: label.slice(4) };
  if (label.startsWith('agent-') && label.length > 6) return { surface: 'agent', handle: label.slice(6) };
  return { surface: 'unknown' };
}
