// One pino logger for the process. Secrets never go into a log line: the redact list covers the
// headers and body fields that carry them (tokens, passwords, codes, keys).
import { pino, type Logger } from 'pino';

export type { Logger };

export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers["x-client-authorization"]',
  'req.headers["x-device-token"]',
  '*.password',
  '*.pin',
  '*.code',
  '*.secret',
  '*.token',
  '*.refreshToken',
  '*.challengeToken',
  '*.deviceToken',
];

export function createLogger(level = 'info', destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { pid: process.pid },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination ?? pino.destination({ dest: 1, sync: false }),
  );
}

/** A logger that drops everything: for unit tests and library use. */
export const silentLogger: Logger = pino({ level: 'silent' });
