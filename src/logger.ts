import { pino } from 'pino';

export type Logger = pino.Logger;

/** JSON lines on stdout, in a terminal too (pipe through `pino-pretty` to read them): one format to parse and ship. */
export function createLogger(level: string, name = 'mailer'): Logger {
  return pino({ name, level, base: undefined, timestamp: pino.stdTimeFunctions.isoTime });
}
