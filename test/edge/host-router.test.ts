import { describe, expect, it } from 'vitest';
import { routeHost } from '../../edge/index.ts';

describe('host router', () => {
  it('[SURF-01] routes the management API on api.<domain> and the bare domain', () => {
    expect(routeHost('api.localhost:8080', 'localhost')).toEqual({ surface: 'management' });
    expect(routeHost('localhost', 'localhost')).toEqual({ surface: 'management' });
    expect(routeHost('API.Example.COM.', 'example.com')).toEqual({ surface: 'management' });
  });

  it('[SURF-02] [SURF-03] [SURF-04] gateway hosts name a handle: mcp-{handle} and agent-{handle}', () => {
    expect(routeHost('mcp-demo.localhost:8080', 'localhost')).toEqual({ surface: 'mcp', handle: 'demo' });
    expect(routeHost('agent-my-bot.example.com', 'example.com')).toEqual({ surface: 'agent', handle: 'my-bot' });
    expect(routeHost('mcp-.localhost', 'localhost')).toEqual({ surface: 'unknown' });
    expect(routeHost('agent-.localhost', 'localhost')).toEqual({ surface: 'unknown' });
  });

  it('[SURF-06] another domain keeps the same prefixes', () => {
    expect(routeHost('mcp-demo.staging.example.net', 'staging.example.net')).toEqual({ surface: 'mcp', handle: 'demo' });
    expect(routeHost('mcp-demo.example.net', 'staging.example.net')).toEqual({ surface: 'unknown' });
  });

  it('refuses hosts outside the domain, nested labels and missing hosts', () => {
    expect(routeHost('evil.com', 'localhost')).toEqual({ surface: 'unknown' });
    expect(routeHost('a.mcp-demo.localhost', 'localhost')).toEqual({ surface: 'unknown' });
    expect(routeHost('mcpdemo.localhost', 'localhost')).toEqual({ surface: 'unknown' });
    expect(routeHost('apilocalhost', 'localhost')).toEqual({ surface: 'unknown' });
    expect(routeHost(undefined, 'localhost')).toEqual({ surface: 'unknown' });
  });
});
