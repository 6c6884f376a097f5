import { instantOf, PlatformError } from '../../runtime/index.ts';

/**
 * Cursors of the keyset-paged lists (approval gates, attachments, workflow runs, plugin builds): the last row's time
 * and id, opaque to clients. One form and one refusal for all of them.
 */
export const encodeKeyset = (at: string, id: string) => Buffer.from(JSON.stringify([at, id])).toString('base64url');

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * The time and id a cursor names; MGMT_INVALID_QUERY for anything this server did not issue (`uuid`: the list's ids
 * are UUIDs, so a cursor naming anything else never reaches the query).
 */
export function decodeKeyset(cursor: string, opts: { uuid?: boolean } = {}): { at: string; id: string } {
  try {
    const v = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(v) && v.length === 2 && typeof v[0] === 'string' && instantOf(v[0]) === v[0] && typeof v[1] === 'string' && v[1].length > 0 && v[1].length <= 100 && (!opts.uuid || UUID.test(v[1]))) return { at: v[0], id: v[1] };
  } catch {
    // the same answer as any cursor this server never issued
  }
  throw new PlatformError('MGMT_INVALID_QUERY', 'cursor: not a cursor this server issued (pass next_cursor from the previous page as it is)');
}
