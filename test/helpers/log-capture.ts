// A logger whose lines a test reads: the server's real pino logger, writing into an array.
import { createLogger, type Logger } from '../../core/log.js';

export interface CapturedLog {
  logger: Logger;
  /** Raw lines as pino wrote them. */
  lines: string[];
  /** The lines parsed as JSON. */
  entries(): Array<Record<string, any>>;
}

export function captureLog(level = 'info'): CapturedLog {
  const lines: string[] = [];
  const logger = createLogger(level, { write: (s: string) => void lines.push(s) });
  return { logger, lines, entries: () => lines.flatMap((chunk) => chunk.split('\n').filter(Boolean).map((l) => JSON.parse(l))) };
}
