import type { BaseEvent, RunAgentInput } from '@ag-ui/core';
import type { EventEncoder } from '@ag-ui/encoder';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { PlatformError } from '../../runtime/index.ts';
import { clientGone, prepend, SSE_HEADERS, sseStream } from '../http/index.ts';
import type { A2aAdmit } from './admission.ts';
import { aguiErrorOf } from './agui-errors.ts';
import { AguiRun } from './agui-events.ts';
import { gateDecisionMessage, openGate } from './agui-gates.ts';
import { readRunInput, userTurn } from './agui-input.ts';
import type { A2aBackend, A2aCallContext, RunEvent } from './backend.ts';
import { readParams } from './protojson.ts';
import { EXTENSIONS } from './card.ts';
import { SendMessageParamsSchema, type SendMessageParams } from './schemas.ts';

/**
 * @ag-ui/encoder (with its protobuf runtime) is loaded by the first AG-UI run, not with every node: most nodes serve
 * none, and it was a twentieth of a second of each start.
 */
let encoderModule: Promise<typeof EventEncoder> | null = null;
const encoderClass = () => (encoderModule ??= import('@ag-ui/encoder').then((m) => m.EventEncoder));

/** The two paths of the route (spec §4.3). */
export const AGUI_PATHS: ReadonlySet<string> = new Set(['/agui', '/ag-ui']);

export interface AguiRouteDeps {
  admit: A2aAdmit;
  backend: A2aBackend | undefined;
  /** The body of an admitted request as JSON (a large one parsed in the task pool); `base64`: strings found to be base64. */
  body(request: FastifyRequest, accountId: string, signal: AbortSignal, base64: string[]): Promise<unknown>;
}

/** Sends the route's error before any event: an HTTP status with `{code, message}`. */
export function sendAguiError(request: FastifyRequest, reply: FastifyReply, err: unknown, quiet = false) {
  const e = aguiErrorOf(err);
  if (e.internal && !quiet) request.log.error({ err }, 'ag-ui request failed');
  return reply.code(e.status).headers(e.headers).type('application/json').send(e.body);
}

/** The A2A message a run sends: the gate decision answering `resume`, else the last user message. */
async function runMessage(input: RunAgentInput, backend: A2aBackend, ctx: A2aCallContext): Promise<unknown> {
  const resume = input.resume ?? [];
  if (!resume.length) return userTurn(input);
  // A run of this platform stops at one gate at a time, so it raises one interrupt.
  if (resume.length > 1) throw new PlatformError('AGUI_INVALID_INPUT', 'invalid AG-UI run input: resume: answer the one open interrupt of the last run (a run stops at one gate at a time)');
  const entry = resume[0]!;
  const open = await openGate(backend, ctx, input.threadId, entry.interruptId);
  return { message: gateDecisionMessage(entry, open, `${input.runId}:resume`) };
}

/**
 * `POST /agui` and `POST /ag-ui` (spec §4.3, A2A-RPC-03): an AG-UI run of the host's agent. The caller is admitted
 * exactly as on A2A (spec §5: 401 with the challenge, a user's API key 403); the body is limited before it is read
 * (413), must be JSON (415) and a valid RunAgentInput (400, agui-input.ts). The run's first event is awaited before the
 * stream opens, so a run refused at its start (a message id used before, an interrupt not open) is an HTTP error;
 * after that every failure is a RUN_ERROR event. Events are encoded by @ag-ui/encoder for the request's Accept
 * (Server-Sent Events, or AG-UI's protobuf framing when asked for).
 */
export function aguiRoute(deps: AguiRouteDeps) {
  return async function agui(request: FastifyRequest, reply: FastifyReply) {
    const { agent } = request.a2a!;
    const gone = clientGone(reply.raw);
    try {
      const caller = await deps.admit(agent, request.headers);
      const base64: string[] = [];
      const input = readRunInput(await deps.body(request, agent.accountId, gone, base64));
      const backend = deps.backend;
      if (!backend) throw new PlatformError('A2A_UNSUPPORTED_OPERATION', 'this agent gateway has no agent runtime: AG-UI runs arrive with it');
      // AG-UI negotiates no A2A extension: gate messages reach it untagged; a form reaches it whole (as an interrupt).
      const ctx: A2aCallContext = { ...caller, extensions: [EXTENSIONS.a2ui], signal: gone };
      const params: SendMessageParams = readParams(SendMessageParamsSchema, await runMessage(input, backend, ctx), { base64 });
      const events = backend.streamRun ? backend.streamRun(params, ctx) : backend.sendStreamingMessage(params, ctx);
      const it = events[Symbol.asyncIterator]();
      const first = await it.next();
      const run = new AguiRun({ threadId: input.threadId, runId: input.runId });
      const encoder = new (await encoderClass())({ accept: typeof request.headers.accept === 'string' ? request.headers.accept : 'text/event-stream' });
      async function* aguiEvents(): AsyncGenerator<BaseEvent> {
        yield* run.start();
        if (first.done) throw new PlatformError('A2A_INVALID_AGENT_RESPONSE', "the run's stream ended before its first event");
        for await (const e of prepend<RunEvent>(first.value, it)) {
          yield* run.next(e);
          if (run.ended) return;
        }
        if (!run.ended) throw new PlatformError('A2A_INVALID_AGENT_RESPONSE', "the run's stream ended before the run did");
      }
      const stream = sseStream<BaseEvent>({
        events: aguiEvents(),
        frame: (event) => event,
        encode: (event) => encoder.encodeBinary(event as BaseEvent),
        error: (err) => {
          const e = aguiErrorOf(err);
          if (e.internal && !gone.aborted) request.log.error({ err }, 'ag-ui run failed');
          return run.fail(e.body.message, e.body.code);
        },
      });
      reply.code(200).headers({ ...SSE_HEADERS, 'content-type': encoder.getContentType() });
      return reply.send(stream);
    } catch (err) {
      // A client that left aborts its run: what fails then is no fault of the platform's.
      return sendAguiError(request, reply, err, gone.aborted);
    }
  };
}
