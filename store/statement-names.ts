/**
 * Names for the statements PostgreSQL should keep prepared, so that it parses and plans each once per connection.
 *
 * node-postgres sends a statement without a name as an unnamed one: PostgreSQL parses, analyzes and plans its text on
 * every execution. For the platform's hot statements that is most of their cost: an actor turn's commit (one statement
 * of several CTEs, about 2 KB of SQL) took 250–340 µs of the backend's CPU unnamed and 130–180 µs named, measured one
 * after another on one connection (three such commits in every tool-calling agent task). With a name, node-postgres
 * sends the text with its first use on each connection and only the parameters after that. PostgreSQL then keeps one
 * plan for all values once it costs no more (33–60 µs a commit); pg-driver.ts has each connection make its kept plans
 * again every second, so that they follow the tables as they grow.
 *
 * A text gets a name once it has been seen twice, so that texts built for one occasion (a batch of some size) do not
 * take one; names are kept for at most `MAX_NAMED` texts in the process, and the texts counted toward a name at most
 * `MAX_COUNTED` (the count starts over past it). A name is the same text in every pool of the process, as
 * node-postgres requires per connection.
 */
const MAX_NAMED = 256;
const MAX_COUNTED = 1024;

export interface StatementNames {
  /** The name to prepare `sql` under, or undefined to send it unnamed. */
  nameOf(sql: string): string | undefined;
  /** Stops naming `sql` (its prepared plan no longer fits: the table changed under it); it goes unnamed from now on. */
  forget(sql: string): void;
}

export function statementNames(maxNamed = MAX_NAMED, maxCounted = MAX_COUNTED): StatementNames {
  const names = new Map<string, string>();
  const counted = new Map<string, number>();
  const retired = new Set<string>();
  let next = 0;
  return {
    nameOf(sql) {
      const name = names.get(sql);
      if (name !== undefined || names.size >= maxNamed || retired.has(sql)) return name;
      const seen = (counted.get(sql) ?? 0) + 1;
      if (seen < 2) {
        if (counted.size >= maxCounted) counted.clear();
        counted.set(sql, seen);
        return undefined;
      }
      counted.delete(sql);
      const made = `plt_${next++}`;
      names.set(sql, made);
      return made;
    },
    forget(sql) {
      // Its name is never given again (connections may still hold it prepared as the old plan).
      if (names.delete(sql)) retired.add(sql);
    },
  };
}

/** How long a connection keeps a plan made for all values before it plans again for the tables as they are then. */
export const REPLAN_MS = 1000;

/** The process's names: every pool shares them, so a name is one text on every connection. */
export const processStatementNames = statementNames();

/** PostgreSQL's refusal to run a prepared statement whose result's shape changed since it was planned. */
export const isStalePlan = (err: unknown): boolean =>
  (err as { code?: unknown } | null)?.code === '0A000' && /cached plan must not change result type/.test(String((err as Error).message));

/**
 * Runs `sql` under its name when it has one (`run(name)`), and again unnamed when the named plan went stale (a
 * migration changed a table's shape under it): the text is never named again. Inside a transaction the refusal has
 * aborted it, so it is the caller's. Both drivers run their statements through this.
 */
export async function runNamed<T>(names: StatementNames | null, sql: string, inTransaction: boolean, run: (name: string | undefined) => Promise<T>): Promise<T> {
  const name = names?.nameOf(sql);
  try {
    return await run(name);
  } catch (err) {
    if (!name || !isStalePlan(err)) throw err;
    names!.forget(sql);
    if (inTransaction) throw err;
    return run(undefined);
  }
}
