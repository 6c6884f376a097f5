/**
 * Times taken from the wire (query filters, the time inside a page cursor) before they reach a `timestamptz`
 * parameter. A date-time pattern lets through what PostgreSQL refuses (the 30th of February, month 13, year 0000, an
 * offset past ±15:59) and `Date.parse` takes almost anything ("foo 12", "1"): either would turn a client's mistake
 * into a database error, answered as an internal one. One check for every surface: the instant is read field by
 * field, each field in its range, and the whole must fall in years 1–9999 in UTC.
 */

// RFC 3339 date-time, with the forms JSON Schema's `date-time` format also takes (a lowercase `t`/`z`, a space for
// the `T`, an offset without its colon). Anchored, fixed-width fields and one bounded fraction: linear in the input.
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):?(\d{2}))$/;

const MIN_MS = -62_135_596_800_000; // 0001-01-01T00:00:00.000Z
const MAX_MS = 253_402_300_799_999; // 9999-12-31T23:59:59.999Z

/**
 * The instant an RFC 3339 date-time names, as `toISOString` writes it (UTC, milliseconds); null when any field is
 * out of range or the instant falls outside years 1–9999.
 */
export function instantOf(text: string): string | null {
  const m = DATE_TIME.exec(text);
  if (!m) return null;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return null;
  const offsetHours = m[10] === undefined ? 0 : Number(m[10]);
  const offsetMinutes = m[11] === undefined ? 0 : Number(m[11]);
  if (offsetHours > 15 || offsetMinutes > 59) return null;
  // Date.UTC reads years 0–99 as 1900–1999: the year is set on its own.
  const at = new Date(0);
  at.setUTCFullYear(year, month - 1, day);
  // A day past the month's end rolls into the next month.
  if (at.getUTCDate() !== day) return null;
  at.setUTCHours(hour, minute, second, Number((m[7] ?? '0').padEnd(3, '0').slice(0, 3)));
  const sign = m[9] === '-' ? -1 : 1;
  const ms = at.getTime() - sign * (offsetHours * 60 + offsetMinutes) * 60_000;
  return ms < MIN_MS || ms > MAX_MS ? null : new Date(ms).toISOString();
}
