import type { FastifyInstance, FastifyRequest } from 'fastify';
import { isPlatformError, PlatformError, type Services } from '../../runtime/index.ts';
import { INLINE_BYTES, MANAGEMENT_MAX_KEYS, MANAGEMENT_MAX_VALUES, MAX_DEPTH, parseManagementBody, parseManagementInTaskPool, restoreLifted, type ParsedManagementBody } from '../http/index.ts';

/**
 * JSON bodies of the management API within the node's thread budget (DESIGN §5). A body of up to 1 MiB of small keys
 * took the thread 60-110 ms to parse. A route checks its caller's credential on arrival, before the body is read
 * (auth.ts), so by the time a body is parsed its caller is known: a body up to INLINE_BYTES is parsed where it arrives
 * (a few milliseconds at most), a larger one in the task pool, in the lane of the caller's account. Either way the
 * same check runs (http/json-body.ts `parseManagementBody`): at most MANAGEMENT_MAX_VALUES values, MANAGEMENT_MAX_KEYS
 * object keys (what a copy back from the worker costs) and MAX_DEPTH levels (deeper, a body parses and then overflows
 * the stack of what walks it later: an internal error instead of the caller's), and no key that could poison a
 * prototype once merged into another object, which fastify's own parser refused too.
 */

/** The lane of a request without a caller's account (the OAuth routes, the operator's). */
const NO_ACCOUNT_LANE = 'management:no-account';
/** A parse of 1 MiB takes under 100 ms in a worker; this only bounds a worker that went wrong. */
const PARSE_LIMITS = { timeoutMs: 10_000, onLimit: 'PLT_BODY_UNREADABLE' } as const;

const REFUSALS: Record<Exclude<ParsedManagementBody, { ok: true }>['reason'], string> = {
  json: 'malformed request body: the body is not valid JSON',
  proto: 'malformed request body: it has a __proto__ key, or a constructor holding a prototype key',
  depth: `invalid body: it nests arrays and objects deeper than ${MAX_DEPTH} levels`,
  keys: `invalid body: it holds more than ${MANAGEMENT_MAX_KEYS} object keys`,
  values: `invalid body: it holds more than ${MANAGEMENT_MAX_VALUES} JSON values`,
};

export function jsonBodies(app: FastifyInstance, services: Pick<Services, 'tasks'>, bodyLimit: number) {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit }, (request, body, done) => {
    const bytes = body as Buffer;
    if (bytes.length > INLINE_BYTES) {
      parseLarge(request, bytes).then(
        (value) => done(null, value),
        (err: Error) => done(err, undefined),
      );
      return;
    }
    const r = parseManagementBody(bytes);
    if (r.ok) done(null, r.value);
    else done(new PlatformError('MGMT_INVALID_BODY', REFUSALS[r.reason]), undefined);
  });

  async function parseLarge(request: FastifyRequest, bytes: Buffer): Promise<unknown> {
    const tenant = request.caller?.accountId ?? NO_ACCOUNT_LANE;
    let r;
    try {
      r = await parseManagementInTaskPool(services.tasks, bytes, PARSE_LIMITS, { tenant });
    } catch (err) {
      if (isPlatformError(err, 'PLT_BODY_UNREADABLE')) throw new PlatformError('MGMT_INVALID_BODY', `malformed request body: ${err.message}`);
      throw err;
    }
    if (!r.ok) throw new PlatformError('MGMT_INVALID_BODY', REFUSALS[r.reason]);
    return restoreLifted(r);
  }
}
