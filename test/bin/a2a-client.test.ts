import { describe, expect, it } from 'vitest';
import { artifactDelta, sseData } from '../../bin/cli/a2a-client.ts';

async function* chunks(...parts: (string | Buffer)[]) {
  for (const p of parts) yield typeof p === 'string' ? Buffer.from(p) : p;
}
const all = async (it: AsyncIterable<string>) => {
  const out: string[] = [];
  for await (const s of it) out.push(s);
  return out;
};

describe('the CLI A2A client', () => {
  it('[A2A-STREAM-02] reads SSE frames split anywhere, CRLF or LF, skipping comments and other fields', async () => {
    const body = 'data: {"a":1}\n\n: keep-alive\n\nevent: x\r\nid: 3\r\ndata: {"b":\r\ndata: 2}\r\n\r\ndata:{"c":"é"}';
    const bytes = Buffer.from(body);
    // Split inside a frame, inside a CRLF and inside a multibyte character.
    const cut = [5, 13, body.indexOf('\r\n\r\n') + 1, bytes.length - 3];
    const pieces = [0, ...cut].map((from, i) => bytes.subarray(from, cut[i] ?? bytes.length));
    expect(await all(sseData(chunks(...pieces)))).toEqual(['{"a":1}', '{"b":\n2}', '{"c":"é"}']);
    expect(await all(sseData(chunks('data: 1\n\ndata: 2\n\n')))).toEqual(['1', '2']);
  });

  it('[A2A-STREAM-09] prints what is new of an artifact: appended chunks as they come, a replacement only past what was shown', () => {
    let shown = '';
    const out: string[] = [];
    for (const [text, append] of [['The ', false], ['sum ', true], ['is ', true], ['42.', true], ['The sum is 42.', false]] as const) {
      const d = artifactDelta(shown, text, append);
      out.push(d.delta);
      shown = d.full;
      expect(d.revised).toBe(false);
    }
    expect(out.join('')).toBe('The sum is 42.');
    expect(shown).toBe('The sum is 42.');
    expect(artifactDelta('The sum is 4', 'The total is 42.', false)).toEqual({ full: 'The total is 42.', delta: 'The total is 42.', revised: true });
  });
});
