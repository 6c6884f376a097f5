import { PlatformError } from '../../runtime/index.ts';

/**
 * The JSON-RPC 2.0 envelope of an A2A request (spec §4.3: `jsonrpc` "2.0", `id`, `method`, `params`). What the
 * gateway takes is narrower than JSON-RPC allows, because every A2A method answers:
 * - one request per POST: a batch (an array) is -32600, like an empty or non-object body;
 * - an `id` that is a string or a finite number: a request without one would be a notification, which no A2A
 *   method is, and a `null` id could not be told apart from the id of an error about an unreadable request;
 * - `params`, when present, an object or an array (JSON-RPC's structured values; A2A then wants an object: -32602).
 */

export type RpcId = string | number;

export interface RpcRequest {
  id: RpcId;
  method: string;
  params: unknown;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isId = (v: unknown): v is RpcId => typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v));

const invalid = (message: string) => new PlatformError('A2A_INVALID_REQUEST', `Invalid Request: ${message}`);

/** The id an error answer echoes: the request's own when it is readable, else null (JSON-RPC 2.0 §5). */
export const readableId = (body: unknown): RpcId | null => (isObject(body) && isId(body.id) ? body.id : null);

export function readEnvelope(body: unknown): RpcRequest {
  if (Array.isArray(body)) throw invalid('JSON-RPC batches are not supported: send one request per POST');
  if (!isObject(body)) throw invalid('the body must be a JSON-RPC 2.0 request object');
  if (body.jsonrpc !== '2.0') throw invalid('jsonrpc must be "2.0"');
  if (!('id' in body)) throw invalid('id is required: every A2A method answers, so notifications are not taken');
  if (!isId(body.id)) throw invalid('id must be a string or a number');
  if (typeof body.method !== 'string' || body.method === '') throw invalid('method must be a non-empty string');
  if ('params' in body && typeof body.params !== 'object') throw invalid('params must be an object');
  if (body.params === null) throw invalid('params must be an object');
  return { id: body.id, method: body.method, params: body.params };
}
