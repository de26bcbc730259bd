import { pino } from 'pino';

export type Logger = pino.Logger;

/** JSON logs to stdout in production; one readable line per entry when stdout is a terminal. */
export function createLogger(level: string, name = 'mailer'): Logger {
  return pino({ name, level, base: undefined, timestamp: pino.stdTimeFunctions.isoTime });
}
