import { Readable } from 'node:stream';
import { parse } from '@bytecodealliance/jco-transpile/wasm-tools';
import { request, FormData } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pluginVersionAddress, versionOutcome } from '../../runtime/index.ts';
import { buildComponent, CALC_WAT } from '../helpers/components.ts';
import { npack, type TarEntry } from '../helpers/npack.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

const CALC_DOC_WIT = `package test:calc;
world calc {
  /// Adds two integers.
  export add: func(a: s32, b: s32) -> s32;
  /// Declared here but not exported by the component: never a tool.
  export subtract: func(a: s32, b: s32) -> s32;
}`;
const CALC_WIT = `package test:calc;
world calc {
  export add: func(a: s32, b: s32) -> s32;
}`;
const CONFIG = `schema_version: "1.0"
metadata: { name: calculator, description: Does sums, author: Ada, license: MIT, tags: [math], homepage: https://example.com }
permissions: { environment: { allow: [{ key: GREETING }] } }
resources: { limits: { memory: 32Mi, timeout: 2s } }
`;

describe('POST /v1/capabilities/upload', () => {
  let p: TestPlatform;
  let key: string;
  let calc: Uint8Array;
  let core: Uint8Array;

  const upload = async (parts: { field?: string; filename?: string; body?: Buffer | Uint8Array }[], credential: string | null = key, fields: Record<string, string> = {}) => {
    const form = new FormData();
    for (const [k, v] of Object.entries(fields)) form.append(k, v);
    for (const part of parts) form.append(part.field ?? 'archive', new Blob([part.body ?? Buffer.alloc(0)]), part.filename ?? 'calc.npack');
    const res = await request(`${p.url}/v1/capabilities/upload`, {
      method: 'POST',
      headers: { host: 'api.localhost', ...(credential ? { authorization: `Bearer ${credential}` } : {}) },
      body: form,
    });
    const text = await res.body.text();
    return { status: res.statusCode, json: JSON.parse(text) };
  };
  const pack = (entries: TarEntry[]) => npack(entries);
  const calcEntries = (): TarEntry[] => [{ name: 'calc.wasm', body: Buffer.from(calc) }];

  beforeAll(async () => {
    p = await startTestPlatform();
    key = p.node.demo!.userKey;
    calc = await buildComponent({ wit: CALC_WIT, world: 'calc', wat: CALC_WAT });
    core = await parse(CALC_WAT);
  }, 60_000);
  afterAll(() => p.close());

  it('[LIMIT-02] the upload route has no rate limit: 40 uploads in a burst are all registered', async () => {
    const archive = await pack([...calcEntries(), { name: 'platform.yaml', body: 'schema_version: "1.0"\nmetadata: { name: burst }' }]);
    const results = await Promise.all(Array.from({ length: 40 }, () => upload([{ body: archive, filename: 'burst.npack' }])));
    expect(results.map((r) => r.status)).toEqual(Array(40).fill(200));
    expect(new Set(results.map((r) => r.json.data.version)).size).toBe(40);
  });

  it('[UPLOAD-01] [UPLOAD-06] [UPLOAD-07] [UPLOAD-09] [UPLOAD-10] [UPLOAD-11] [UPLOAD-13] [UPLOAD-17] [UPLOAD-18] [UPLOAD-19] [UPLOAD-21] registers a plugin from a full archive', async () => {
    const res = await upload([
      {
        body: await pack([
          { name: 'plugin/', type: 'directory' },
          { name: 'plugin/calc.wasm', body: Buffer.from(calc) },
          { name: 'plugin/platform.yaml', body: CONFIG },
          { name: 'plugin/.env', body: 'GREETING=hi\nSECRET=never-kept\n' },
          { name: 'plugin/calc.wit', body: CALC_DOC_WIT },
        ]),
      },
    ]);
    expect(res.status).toBe(200);
    expect(Object.keys(res.json)).toEqual(['data']);
    expect(res.json.data).toEqual({ capability_id: expect.stringMatching(/^[0-9a-f-]{36}$/), capability_name: 'calculator', version: 1, files_processed: ['wasm', 'platform', 'env', 'wit'] });
    const stored = await p.node.services.store.db.query<{ env: unknown }>('select env from capability_versions where capability_id = $1', [res.json.data.capability_id]);
    expect(stored.rows[0]!.env).toEqual({ GREETING: 'hi' });
  });

  it('[UPLOAD-08] [PLUGIN-01] [PLUGIN-05] each upload adds the next version, created dormant, listed with its tools', async () => {
    const archive = await pack([...calcEntries(), { name: 'platform.yml', body: 'schema_version: "1.0"\nmetadata: { name: versioned }' }, { name: 'x.wit', body: CALC_DOC_WIT }]);
    const first = await upload([{ body: archive }]);
    const second = await upload([{ body: archive }]);
    expect([first.json.data.version, second.json.data.version]).toEqual([1, 2]);
    expect(second.json.data.capability_id).toBe(first.json.data.capability_id);
    const list = await p.call('GET', '/v1/capabilities?namespace=versioned', { headers: { authorization: `Bearer ${key}` } });
    const cap = list.json.data.capabilities[0];
    expect(cap).toMatchObject({ name: 'versioned' });
    expect(cap.specifications.versions.map((v: { version_number: number }) => v.version_number)).toEqual([1, 2]);
    expect(cap.specifications.versions[1].tools).toEqual([{ name: 'versioned_add', description: 'Adds two integers.' }]);
    expect(cap.specifications.versions[1].resources).toEqual({ limits: { memory: '64Mi', timeout: '5s' } });
    // Each version was created dormant (its first journaled event is the activation it then asked for), and
    // activates by itself: the later upload ends up serving.
    const address = pluginVersionAddress(p.node.demo!.accountId, cap.id, 2);
    expect(await versionOutcome(p.node.services, { accountId: p.node.demo!.accountId, capabilityId: cap.id, version: 2 })).toEqual({ state: 'active', reason: null });
    const journal = await p.node.services.store.actorEvents.after(address, 0);
    expect(journal.map((e) => (e.event as { type: string }).type)).toEqual(['version.activating', 'version.activated']);
  });

  it('[UPLOAD-24] [UPLOAD-25] [UPLOAD-12] tools come from the exports; WIT only describes; missing docs are warnings', async () => {
    const documented = await upload([{ body: await pack([...calcEntries(), { name: 'a.wit', body: CALC_DOC_WIT }]) }]);
    expect(documented.json.data.schema_warnings).toBeUndefined();
    const bare = await upload([{ filename: 'bare.npack', body: await pack(calcEntries()) }]);
    expect(bare.status).toBe(200);
    expect(bare.json.data.schema_warnings).toEqual(["add: no description (add a /// doc comment in the archive's .wit)"]);
    const list = await p.call('GET', '/v1/capabilities?namespace=bare', { headers: { authorization: `Bearer ${key}` } });
    expect(list.json.data.capabilities[0].specifications.versions[0].tools.map((t: { name: string }) => t.name)).toEqual(['bare_add']);
  });

  it('[UPLOAD-22] [UPLOAD-23] resolves the name from the file name, then the component stem', async () => {
    expect((await upload([{ filename: 'my-tools.npack', body: await pack(calcEntries()) }])).json.data.capability_name).toBe('my-tools');
    expect((await upload([{ filename: '.npack', body: await pack([{ name: 'stem-name.wasm', body: Buffer.from(calc) }]) }])).json.data.capability_name).toBe('stem-name');
  });

  it('[UPLOAD-16] [UPLOAD-20] the last *.wasm wins; directories and other entries are skipped', async () => {
    const res = await upload([{ filename: 'last.npack', body: await pack([{ name: 'old.wasm', body: 'not wasm' }, { name: 'docs/', type: 'directory' }, { name: 'notes.txt', body: 'x' }, ...calcEntries()]) }]);
    expect(res.status).toBe(200);
    expect(res.json.data.files_processed).toEqual(['wasm']);
    const wrongOrder = await upload([{ filename: 'last.npack', body: await pack([...calcEntries(), { name: 'new.wasm', body: 'not wasm' }]) }]);
    expect(wrongOrder.status).toBe(400);
  });

  it('[UPLOAD-02] [UPLOAD-05] a missing archive field is 400; other fields are ignored', async () => {
    const missing = await upload([{ field: 'file', body: await pack(calcEntries()) }], key, { note: 'hello' });
    expect(missing.status).toBe(400);
    expect(missing.json.message).toMatch(/missing archive/);
    const extra = await upload([{ field: 'other', filename: 'x.bin', body: Buffer.from('x') }, { filename: 'extra.npack', body: await pack(calcEntries()) }], key, { note: 'ignored' });
    expect(extra.status).toBe(200);
  });

  it('[UPLOAD-03] [UPLOAD-04] a wrong extension or an empty body is 400, each with its message', async () => {
    const tgz = await upload([{ filename: 'calc.tar.gz', body: await pack(calcEntries()) }]);
    expect(tgz.status).toBe(400);
    expect(tgz.json.message).toMatch(/must end \.npack/);
    const empty = await upload([{ filename: 'calc.npack', body: Buffer.alloc(0) }]);
    expect(empty.status).toBe(400);
    expect(empty.json.message).toMatch(/empty archive/);
  });

  it('[UPLOAD-14] [UPLOAD-15] unreadable archives and archives without a component are 400', async () => {
    const good = await pack(calcEntries());
    for (const [body, message, code] of [
      [Buffer.from('plain text'), /not gzip/, 'PLUGIN_ARCHIVE_NOT_GZIP'],
      [good.subarray(0, good.length - 20), /truncated/, 'PLUGIN_ARCHIVE_TRUNCATED'],
      [await pack([{ name: 'platform.yaml', body: 'schema_version: "1.0"' }]), /no component/, 'PLUGIN_ARCHIVE_NO_WASM'],
    ] as const) {
      const res = await upload([{ body }]);
      expect(res.status).toBe(400);
      expect(res.json).toMatchObject({ category: 'invalid_request', code });
      expect(res.json.message).toMatch(message);
    }
  });

  it('[UPLOAD-26] [UPLOAD-27] [UPLOAD-28] failed WASM validation is 400 with the reason', async () => {
    const coreRes = await upload([{ body: await pack([{ name: 'core.wasm', body: Buffer.from(core) }]) }]);
    expect(coreRes.status).toBe(400);
    expect(coreRes.json.message).toMatch(/core WebAssembly module, not a component/);
    const forbidden = await buildComponent({
      wit: `package acme:bad;\nworld w { import acme:secrets/vault@1.0.0; export f: func() -> u32; }\npackage acme:secrets@1.0.0 { interface vault { read: func(k: string) -> string; } }`,
      world: 'w',
    });
    const imp = await upload([{ body: await pack([{ name: 'bad.wasm', body: Buffer.from(forbidden) }]) }]);
    expect(imp.status).toBe(400);
    expect(imp.json.message).toMatch(/import not allowed: acme:secrets\/vault@1\.0\.0/);
    const none = await buildComponent({ wit: `package acme:none;\nworld w { import wasi:random/random@0.2.3; }\npackage wasi:random@0.2.3 { interface random { get-random-u64: func() -> u64; } }`, world: 'w' });
    const noExports = await upload([{ body: await pack([{ name: 'none.wasm', body: Buffer.from(none) }]) }]);
    expect(noExports.status).toBe(400);
    expect(noExports.json.message).toMatch(/exports no callable function/);
  });

  it('[UPLOAD-29] [UPLOAD-30] a config without schema_version "1.0" or otherwise invalid is 400 naming each problem', async () => {
    const v = await upload([{ body: await pack([...calcEntries(), { name: 'platform.yaml', body: 'schema_version: 1.0' }]) }]);
    expect(v.status).toBe(400);
    expect(v.json.message).toContain('/schema_version: must be the string "1.0"');
    const bad = await upload([{ body: await pack([...calcEntries(), { name: 'platform.yaml', body: 'schema_version: "1.0"\nresources: { limits: { memory: lots } }\ncolour: red' }]) }]);
    expect(bad.status).toBe(400);
    expect(bad.json.message).toContain('/: unknown field "colour"');
    expect(bad.json.message).toContain('/resources/limits/memory');
  });

  it('[UPLOAD-31] a body above 20 MB is 413; at the limit it is read', async () => {
    const framing = 1000;
    const over = await upload([{ filename: 'big.npack', body: Buffer.alloc(20_000_001) }]);
    expect(over.status).toBe(413);
    expect(over.json.category).toBe('payload_too_large');
    const under = await upload([{ filename: 'big.npack', body: Buffer.alloc(20_000_000 - framing) }]);
    expect(under.status).toBe(400);
    expect(under.json.message).toMatch(/not gzip/);
    // Chunked, with no declared length: refused while streaming.
    async function* body() {
      yield Buffer.from('--b\r\nContent-Disposition: form-data; name="archive"; filename="big.npack"\r\nContent-Type: application/octet-stream\r\n\r\n');
      for (let i = 0; i < 21; i++) yield Buffer.alloc(1_000_000);
      yield Buffer.from('\r\n--b--\r\n');
    }
    const res = await request(`${p.url}/v1/capabilities/upload`, {
      method: 'POST',
      headers: { host: 'api.localhost', authorization: `Bearer ${key}`, 'content-type': 'multipart/form-data; boundary=b' },
      body: Readable.from(body()),
    }).catch((e: Error) => e);
    if (res instanceof Error) throw res;
    expect(res.statusCode).toBe(413);
    await res.body.dump();
  }, 60_000);

  it('needs a credential with write authority (403 otherwise)', async () => {
    const body = await pack(calcEntries());
    expect((await upload([{ body }], null)).status).toBe(403);
    const { admin } = p.node.services;
    const viewer = await admin.createKey({ principal: (await admin.createPrincipal({ account: p.node.demo!.accountId, name: 'reader', role: 'viewer' })).id });
    const denied = await upload([{ body }], viewer.key);
    expect(denied.status).toBe(403);
    expect(denied.json.code).toBe('MGMT_FORBIDDEN');
    const notMultipart = await p.call('POST', '/v1/capabilities/upload', { headers: { authorization: `Bearer ${key}` }, json: { archive: 'x' } });
    expect(notMultipart.status).toBe(400);
  });
});
