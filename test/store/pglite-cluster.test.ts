import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadMigrations, openStore, setupSteps } from '../../store/index.ts';
import { prepareCluster, templatePath, type SetupStep } from '../../store/pglite-cluster.ts';
import { PGLITE_START_PARAMS } from '../../store/pglite-driver.ts';

// Each new cluster runs initdb (seconds of WebAssembly): this file makes three.
const INITDB_MS = 180_000;

describe('the embedded database of a new data directory', () => {
  let root: string;
  let templates: string;
  let setup: SetupStep[];
  const pgdata = (name: string) => path.join(root, name, 'pgdata');
  const templateEntries = () => readdirSync(templates).filter((n) => n.startsWith('pglite-'));

  beforeAll(async () => {
    root = mkdtempSync(path.join(os.tmpdir(), 'pglite-cluster-'));
    templates = path.join(root, 'templates');
    setup = setupSteps(await loadMigrations());
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('is made with its migrations by a process of its own, and kept as the template', async () => {
    mkdirSync(path.join(root, 'a'));
    const store = await openStore({ driver: 'pglite', dataDir: pgdata('a'), blobDir: path.join(root, 'a', 'blobs'), templateDir: templates });
    try {
      const applied = await store.db.query<{ n: number }>('select count(*)::int as n from schema_migrations');
      expect(applied.rows[0]!.n).toBe((await loadMigrations()).length);
      expect(await store.settings.getOrCreate('test.key', 'a')).toBe('a');
    } finally {
      await store.close();
    }
    // Nothing half-made beside the cluster, and exactly one template, whole.
    expect(readdirSync(path.join(root, 'a')).filter((n) => n.startsWith('pgdata'))).toEqual(['pgdata']);
    expect(templateEntries()).toEqual([path.basename(templatePath(templates, PGLITE_START_PARAMS, setup))]);
    expect(existsSync(path.join(templatePath(templates, PGLITE_START_PARAMS, setup), 'PG_VERSION'))).toBe(true);
  }, INITDB_MS);

  it('a later new data directory starts from a copy of the template: the schema, none of the other one’s rows', async () => {
    mkdirSync(path.join(root, 'b'));
    expect(await prepareCluster(pgdata('b'), { templateDir: templates, startParams: PGLITE_START_PARAMS, setup })).toBe('template');
    const store = await openStore({ driver: 'pglite', dataDir: pgdata('b'), blobDir: path.join(root, 'b', 'blobs'), templateDir: templates });
    try {
      expect(await store.settings.getOrCreate('test.key', 'b')).toBe('b');
      expect((await store.db.query<{ n: number }>('select count(*)::int as n from schema_migrations')).rows[0]!.n).toBe(setup.length - 1);
    } finally {
      await store.close();
    }
  }, INITDB_MS);

  it('a cluster already there is opened as it is; a directory with files but no cluster is left to PGlite', async () => {
    expect(await prepareCluster(pgdata('a'), { templateDir: templates, startParams: PGLITE_START_PARAMS, setup })).toBe('existing');
    mkdirSync(pgdata('c'), { recursive: true });
    writeFileSync(path.join(pgdata('c'), 'postgresql.conf'), '');
    expect(await prepareCluster(pgdata('c'), { templateDir: templates, startParams: PGLITE_START_PARAMS, setup })).toBe('existing');
    expect(readdirSync(pgdata('c'))).toEqual(['postgresql.conf']);
  });

  it('other migrations make another template, which replaces the old one', async () => {
    const more = [...setup, { name: '999_extra', sql: 'begin; create table extra (id int); commit;' }];
    expect(templatePath(templates, PGLITE_START_PARAMS, more)).not.toBe(templatePath(templates, PGLITE_START_PARAMS, setup));
    mkdirSync(path.join(root, 'd'));
    expect(await prepareCluster(pgdata('d'), { templateDir: templates, startParams: PGLITE_START_PARAMS, setup: more })).toBe('initdb');
    expect(templateEntries()).toEqual([path.basename(templatePath(templates, PGLITE_START_PARAMS, more))]);
  }, INITDB_MS);

  it('a migration that fails fails the start with its name, and leaves neither a cluster nor a template', async () => {
    const broken = [...setup, { name: '999_broken', sql: 'begin; select * from no_such_table; commit;' }];
    mkdirSync(path.join(root, 'e'));
    await expect(prepareCluster(pgdata('e'), { templateDir: templates, startParams: PGLITE_START_PARAMS, setup: broken })).rejects.toThrow(/^migration 999_broken failed: .*no_such_table/);
    expect(readdirSync(path.join(root, 'e'))).toEqual([]);
    expect(existsSync(templatePath(templates, PGLITE_START_PARAMS, broken))).toBe(false);
  }, INITDB_MS);
});
