import type { FastifyReply, FastifyRequest } from 'fastify';
import { PlatformError, TRIGGER_HEADERS, TRIGGER_LIMITS, type Triggers } from '../../runtime/index.ts';
import { aguiErrorOf } from './agui-errors.ts';

/** Webhook deliveries of triggers (issue 15 §3): `POST {agent_url}/triggers/{id}`, signed, not authenticated. */
export const TRIGGER_PREFIX = '/triggers/';
export const isTrigger = (request: FastifyRequest) => request.url.split('?')[0]!.startsWith(TRIGGER_PREFIX);
export const triggerTooLarge = () => new PlatformError('TRIGGER_BODY_TOO_LARGE', `the delivery's body is larger than ${TRIGGER_LIMITS.bodyBytes} bytes (256 KiB)`);

/** A delivery's body as the content-type parsers leave it: its bytes, which the signature covers, and whether it says JSON. */
export interface TriggerBody {
  ok: 'raw';
  bytes: Buffer;
  json: boolean;
}

/**
 * A delivery's failure: an HTTP status by the error's kind and a `{code, message}` body, as the AG-UI route answers
 * (a sender of webhooks reads the status; the body says why). No challenge: a signature is not a credential scheme.
 */
export function sendTriggerError(request: FastifyRequest, reply: FastifyReply, err: unknown) {
  const e = aguiErrorOf(err);
  if (e.internal) request.log.error({ err }, 'trigger delivery failed');
  const { 'www-authenticate': _, ...headers } = e.headers;
  return reply.code(e.status).headers(headers).type('application/json').send(e.body);
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** What the run gets of a body that is not JSON: its text, or (binary, or holding NUL) its bytes in base64. */
function asText(bytes: Buffer, mediaType: string): unknown {
  try {
    const text = utf8.decode(bytes);
    if (!text.includes('\0')) return text;
  } catch {
    // not UTF-8: below
  }
  return { media_type: mediaType || 'application/octet-stream', base64: bytes.toString('base64') };
}

export interface TriggerRouteDeps {
  triggers: () => Pick<Triggers, 'deliver'>;
  /** A JSON body, parsed on the node's thread: at most TRIGGER_LIMITS.bodyBytes (http/json-body.ts's INLINE_BYTES). */
  parseJson: (bytes: Buffer) => { ok: true; value: unknown } | { ok: false };
}

/** The route: the host's agent is known (onRequest); the delivery is checked and its run started by the triggers feature. */
export function triggerRoute(deps: TriggerRouteDeps) {
  return async (request: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply) => {
    const { agent } = request.a2a!;
    try {
      const body = request.body as TriggerBody | undefined;
      const bytes = body?.bytes ?? Buffer.alloc(0);
      const header = (name: string) => {
        const v = request.headers[name];
        return typeof v === 'string' ? v : undefined;
      };
      const mediaType = header('content-type')?.split(';')[0]?.trim().toLowerCase() ?? '';
      const { taskId } = await deps.triggers().deliver({
        accountId: agent.accountId,
        agentId: agent.id,
        triggerId: request.params.id,
        timestamp: header(TRIGGER_HEADERS.timestamp),
        signature: header(TRIGGER_HEADERS.signature),
        body: bytes,
        payload: async () => {
          if (!bytes.length) return '';
          if (body?.json) {
            const r = deps.parseJson(bytes);
            if (r.ok) return r.value;
          }
          return asText(bytes, mediaType);
        },
      });
      return reply.code(202).type('application/json').send({ task_id: taskId });
    } catch (err) {
      return sendTriggerError(request, reply, err);
    }
  };
}
