/** Output conventions of every command: `--json` prints one JSON document; errors exit 1 (2 for usage). */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export class CommandError extends Error {
  override readonly name = 'CommandError';
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export function print(value: unknown, json: boolean) {
  if (json) {
    process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
    return;
  }
  if (Array.isArray(value)) {
    process.stdout.write(table(value as Record<string, unknown>[]));
    return;
  }
  if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) process.stdout.write(`${k}: ${typeof v === 'object' ? JSON.stringify(v) : String(v)}\n`);
    return;
  }
  process.stdout.write(`${String(value)}\n`);
}

/** A page of a list: the page as JSON, or its rows as a table and where the next page starts. */
export function printPage(page: { next_cursor?: string | null }, rows: Record<string, unknown>[], columns: string[], json: boolean) {
  if (json) return print(page, true);
  process.stdout.write(table(rows, columns));
  if (page.next_cursor) process.stdout.write(`more: --cursor ${page.next_cursor}\n`);
}

export function table(rows: Record<string, unknown>[], columns?: string[]): string {
  if (rows.length === 0) return '(none)\n';
  const cols = columns ?? Object.keys(rows[0]!);
  const cell = (v: unknown) => (v === null || v === undefined ? '-' : typeof v === 'object' ? JSON.stringify(v) : String(v));
  const widths = cols.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  const line = (vals: string[]) => vals.map((v, i) => v.padEnd(widths[i]!)).join('  ').trimEnd();
  return [line(cols.map((c) => c.toUpperCase())), ...rows.map((r) => line(cols.map((c) => cell(r[c]))))].join('\n') + '\n';
}
