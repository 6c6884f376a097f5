import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import type { Db } from './db.ts';

const MIGRATIONS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');
// One fixed advisory-lock key: nodes starting at once apply migrations one after another.
const MIGRATION_LOCK_KEY = 0x504c4154;

export interface Migration {
  id: number;
  name: string;
  sql: string;
}

export async function loadMigrations(dir = MIGRATIONS_DIR): Promise<Migration[]> {
  const files = (await readdir(dir)).filter((f) => /^\d+_[a-z0-9_-]+\.sql$/.test(f)).sort();
  const out: Migration[] = [];
  for (const file of files) {
    out.push({ id: Number(file.split('_')[0]), name: file, sql: await readFile(path.join(dir, file), 'utf8') });
  }
  return out;
}

/** The table that records which migrations a database has. */
export const MIGRATIONS_TABLE_SQL =
  'create table if not exists schema_migrations (id integer primary key, name text not null, applied_at timestamptz not null default now())';

/** One migration as the script that applies and records it in one transaction. */
export function migrationScript(m: Migration): string {
  return `begin; ${m.sql}; insert into schema_migrations (id, name) values (${m.id}, '${m.name}'); commit;`;
}

/**
 * The steps that make a new embedded database (see pglite-cluster.ts): the migrations table, then each migration as
 * its recorded script. The template of a data directory is keyed by these steps.
 */
export function setupSteps(migrations: readonly Migration[]): { name: string; sql: string }[] {
  return [{ name: 'schema_migrations', sql: MIGRATIONS_TABLE_SQL }, ...migrations.map((m) => ({ name: m.name, sql: migrationScript(m) }))];
}

/** Applies the numbered migrations not applied yet, each in its own transaction. Idempotent and safe to race. */
export async function migrate(db: Db, migrations?: Migration[]): Promise<string[]> {
  const all = migrations ?? (await loadMigrations());
  return db.withAdvisoryLock(MIGRATION_LOCK_KEY, async (conn) => {
    await conn.exec(MIGRATIONS_TABLE_SQL);
    const done = new Set(
      (await conn.query<{ id: number }>('select id from schema_migrations')).rows.map((r) => Number(r.id)),
    );
    const applied: string[] = [];
    for (const m of all) {
      if (done.has(m.id)) continue;
      try {
        await conn.exec(migrationScript(m));
      } catch (err) {
        await conn.exec('rollback').catch(() => {});
        throw new Error(`migration ${m.name} failed: ${(err as Error).message}`, { cause: err });
      }
      applied.push(m.name);
    }
    return applied;
  });
}
