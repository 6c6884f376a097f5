import { beforeAll, describe, expect, it } from 'vitest';
import { EXTENSIONS } from '../../edge/a2a/index.ts';
import { a2aCall, request, withRecordingBackend } from '../helpers/a2a.ts';
import type { TestPlatform } from '../helpers/platform.ts';

describe('agent gateway service parameters: A2A-Version and A2A-Extensions', () => {
  const node = withRecordingBackend();
  const { rec } = node;
  let p: TestPlatform;
  let auth: Record<string, string>;
  beforeAll(() => void ({ p, auth } = node));

  const getTask = (headers: Record<string, string> = {}, path = '/') => a2aCall(p, request('GetTask', { id: 't1' }), { headers: { ...auth, ...headers }, path });

  it('A2A-Version 1.0, 1.0.x, missing or empty is served as 1.0; the patch number is ignored', async () => {
    for (const headers of [{}, { 'a2a-version': '1.0' }, { 'a2a-version': '1.0.1' }, { 'a2a-version': ' 1.0 ' }, { 'a2a-version': '' }] as Record<string, string>[]) {
      const res = await getTask(headers);
      expect(res.json.result?.id, JSON.stringify(headers)).toBe('t1');
    }
    // The query-parameter form too (A2A 1.0 §3.6).
    expect((await getTask({}, '/?A2A-Version=1.0.3')).json.result?.id).toBe('t1');
  });

  it('any other version, 0.3 included, is VersionNotSupported (-32009) over HTTP 200, from the header or the query', async () => {
    for (const [headers, path] of [
      [{ 'a2a-version': '0.3' }, '/'],
      [{ 'a2a-version': '0.3.0' }, '/'],
      [{ 'a2a-version': '99.0' }, '/'],
      [{ 'a2a-version': '1.1' }, '/'],
      [{ 'a2a-version': '2' }, '/'],
      [{ 'a2a-version': 'latest' }, '/'],
      [{}, '/?A2A-Version=0.3'],
    ] as [Record<string, string>, string][]) {
      const res = await getTask(headers, path);
      expect(res.status).toBe(200);
      expect(res.json.error, JSON.stringify(headers) + path).toMatchObject({ code: -32009, data: [{ reason: 'VERSION_NOT_SUPPORTED', domain: 'a2a-protocol.org' }] });
      expect(res.json.id).toBe(1);
    }
  });

  it('[A2A-RPC-08] slash-style names without a version header are -32601; with an explicit 0.3 the version is refused first (-32009)', async () => {
    expect((await a2aCall(p, request('tasks/get', { id: 't1' }), { headers: auth })).json.error.code).toBe(-32601);
    expect((await a2aCall(p, request('tasks/get', { id: 't1' }), { headers: { ...auth, 'a2a-version': '0.3' } })).json.error.code).toBe(-32009);
  });

  it('[A2A-EXT-01] [A2A-EXT-03] [A2A-EXT-04] A2A-Extensions activates the URIs the agent offers, in order, ignores unknown ones, and the response echoes the activated ones', async () => {
    const res = await getTask({ 'a2a-extensions': ` urn:unknown:ext , ${EXTENSIONS.approvalGate},${EXTENSIONS.a2ui}, ${EXTENSIONS.approvalGate}` });
    expect(res.json.result?.id).toBe('t1');
    expect(res.headers['a2a-extensions']).toBe(`${EXTENSIONS.approvalGate}, ${EXTENSIONS.a2ui}`);
    expect(rec.last().ctx.extensions).toEqual([EXTENSIONS.approvalGate, EXTENSIONS.a2ui]);
  });

  it('[A2A-EXT-02] the legacy X-A2A-Extensions header is read too', async () => {
    const res = await getTask({ 'x-a2a-extensions': EXTENSIONS.a2ui });
    expect(res.headers['a2a-extensions']).toBe(EXTENSIONS.a2ui);
    expect(rec.last().ctx.extensions).toEqual([EXTENSIONS.a2ui]);
  });

  it('[A2A-EXT-04] [A2A-EXT-05] without a known extension nothing is activated and no header is echoed; an odd header never causes a 5xx', async () => {
    for (const value of ['', ',,,', 'urn:a, urn:b', 'x'.repeat(4000)]) {
      const res = await getTask({ 'a2a-extensions': value });
      expect(res.status).toBe(200);
      expect(res.json.result?.id).toBe('t1');
      expect(res.headers['a2a-extensions']).toBeUndefined();
      expect(rec.last().ctx.extensions).toEqual([]);
    }
  });

  it('[A2A-EXT-03] the echo is on error answers too, and on streams', async () => {
    const err = await a2aCall(p, request('GetTask', {}), { headers: { ...auth, 'a2a-extensions': EXTENSIONS.a2ui } });
    expect(err.json.error.code).toBe(-32602);
    expect(err.headers['a2a-extensions']).toBe(EXTENSIONS.a2ui);
    const stream = await a2aCall(p, request('SubscribeToTask', { id: 't1' }), { headers: { ...auth, 'a2a-extensions': EXTENSIONS.approvalGate } });
    expect(stream.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(stream.headers['a2a-extensions']).toBe(EXTENSIONS.approvalGate);
  });
});
