import { createRequire } from 'node:module';
import pino, { type DestinationStream, type Logger } from 'pino';
import type { PlatformConfig } from '../runtime/index.ts';

export type LogFormat = PlatformConfig['logFormat'];

/**
 * Pretty lines for a person at a terminal, JSON lines for everything else (a log shipper, a file, a pipe). `auto`
 * decides by whether the logs go to a terminal: a destination stream given by the caller is never one.
 */
export function prettyLogs(format: LogFormat, toTerminal: boolean): boolean {
  return format === 'pretty' || (format === 'auto' && toTerminal);
}

/**
 * The formatter, loaded only when pretty lines are asked for: a node logging JSON never loads it. It formats on the
 * node's thread, synchronously, which suits a terminal and its reader; production logs JSON.
 */
function prettyStream(destination: DestinationStream | undefined, colorize: boolean): DestinationStream {
  const build = createRequire(import.meta.url)('pino-pretty') as typeof import('pino-pretty');
  return build({ destination: destination ?? 1, sync: true, colorize, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' });
}

/** Structured logs; credentials never reach them, whichever header or field carried them, in either format. */
export function createLogger(level: PlatformConfig['logLevel'], destination?: DestinationStream, format: LogFormat = 'auto'): Logger {
  const toTerminal = destination === undefined && process.stdout.isTTY === true;
  return pino(
    {
      level,
      redact: {
        paths: [
          'req.headers.authorization',
          'req.headers["api-key"]',
          'req.headers["x-api-key"]',
          'req.headers.cookie',
          'req.headers["x-platform-operator-token"]',
          '*.password',
          '*.access_token',
          '*.device_code',
          '*.code',
          '*.key',
        ],
        censor: '[redacted]',
      },
    },
    prettyLogs(format, toTerminal) ? prettyStream(destination, toTerminal) : destination,
  );
}
