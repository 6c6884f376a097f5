import pino, { type DestinationStream, type Logger } from 'pino';
import type { PlatformConfig } from '../runtime/index.ts';

/** Structured logs; credentials never reach them, whichever header or field carried them. */
export function createLogger(level: PlatformConfig['logLevel'], destination?: DestinationStream): Logger {
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
    destination,
  );
}
