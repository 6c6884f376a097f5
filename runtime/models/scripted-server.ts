import { setTimeout as sleep } from 'node:timers/promises';
import Fastify, { type FastifyInstance } from 'fastify';
import { completion, completionBody, completionChunks, conversationOf, type ChatRequest } from './openai-wire.ts';
import { answer, type ScriptedRules } from './scripted-rules.ts';

export interface ScriptedServer {
  /** The OpenAI-compatible base URL, ending in `/v1`. */
  baseUrl: string;
  /** The model id it answers as: `scripted/<rules name>`. */
  model: string;
  close(): Promise<void>;
}

const BODY_LIMIT = 4 * 1024 * 1024;

const noSchemas = () => () => {
  throw new Error('the scripted model has no route schemas to compile');
};

const openAiError = (message: string, type = 'invalid_request_error', code: string | null = null) => ({ error: { message, type, param: null, code } });

/**
 * The rules a scripted model answers with: parsed already, or read on its first request (`load`, memoized; the node's
 * own demo rules are known good, and parsing them was a tenth of a second of every start).
 */
export type RulesSource = ScriptedRules | { name: string; load: () => Promise<ScriptedRules> };

/** The scripted model as an HTTP app: `POST /v1/chat/completions` (streaming or not) and `GET /v1/models`. */
export function scriptedApp(source: RulesSource): FastifyInstance {
  const app = Fastify({
    bodyLimit: BODY_LIMIT,
    // No route here has a schema: without these, fastify would load its Ajv and serializer compilers (a tenth of a
    // second of a node's start) for nothing.
    schemaController: { compilersFactory: { buildValidator: noSchemas, buildSerializer: noSchemas } },
  });
  const model = `scripted/${source.name}`;
  let loading: Promise<ScriptedRules> | undefined;
  const rulesOf = (): ScriptedRules | Promise<ScriptedRules> => ('load' in source ? (loading ??= source.load()) : source);
  app.setErrorHandler((err: Error & { statusCode?: number }, _req, reply) => {
    const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
    void reply.status(status).send(openAiError(status === 500 ? 'internal error' : err.message, status === 500 ? 'server_error' : 'invalid_request_error'));
  });
  app.setNotFoundHandler((req, reply) => void reply.status(404).send(openAiError(`no route ${req.method} ${req.url}`, 'invalid_request_error', 'not_found')));
  app.get('/v1/models', async () => ({ object: 'list', data: [{ id: model, object: 'model', created: 0, owned_by: 'platform-scripted' }] }));
  app.post('/v1/chat/completions', async (req, reply) => {
    const body = (req.body ?? {}) as ChatRequest;
    if (typeof body !== 'object' || Array.isArray(body)) return reply.status(400).send(openAiError('the body must be a JSON object'));
    const c = conversationOf(body);
    if (typeof c === 'string') return reply.status(400).send(openAiError(c));
    const a = answer(await rulesOf(), c);
    const meta = completion(typeof body.model === 'string' ? body.model : model);
    if (body.stream !== true) {
      // As slow whole as streamed: the answer arrives after the delays its chunks would have taken.
      if (a.kind === 'reply' && a.delayMs > 0) await sleep(a.delayMs * [...completionChunks(meta, body, a)].length);
      return completionBody(meta, body, a);
    }
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    let closed = false;
    res.on('close', () => (closed = true));
    for (const chunk of completionChunks(meta, body, a)) {
      if (closed) return;
      res.write(`data: ${JSON.stringify(chunk)}\n\n`);
      if (a.kind === 'reply' && a.delayMs > 0) await sleep(a.delayMs);
    }
    res.end('data: [DONE]\n\n');
  });
  return app;
}

/** Serves the scripted model on loopback (port 0: the OS picks one) until closed. */
export async function serveScripted(rules: RulesSource, opts: { port?: number; host?: string } = {}): Promise<ScriptedServer> {
  const app = scriptedApp(rules);
  await app.listen({ port: opts.port ?? 0, host: opts.host ?? '127.0.0.1' });
  const address = app.server.address() as { port: number; address: string };
  const host = address.address.includes(':') ? `[${address.address}]` : address.address;
  return { baseUrl: `http://${host}:${address.port}/v1`, model: `scripted/${rules.name}`, close: () => app.close() };
}
