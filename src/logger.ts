import { pino } from 'pino';
import { currentLogFields, type LogFields } from './telemetry/log-context.js';

export type Logger = pino.Logger;

/**
 * The fields of the work in progress (telemetry/log-context.ts), left out where the logger already binds
 * them (Fastify's per-request loggers bind `reqId`): a JSON line must not name a key twice.
 */
function contextFields(logger: Logger): LogFields | object {
  const fields = currentLogFields();
  // A new object each time: pino merges the line's own fields into what this returns.
  if (fields === undefined) return {};
  const bound = (logger as unknown as Record<symbol, string | undefined>)[pino.symbols.chindingsSym] ?? '';
  if (bound === '' || !bound.includes('"reqId":')) return { ...fields };
  const { reqId: _reqId, ...rest } = fields;
  return rest;
}

/** JSON lines on stdout, in a terminal too (pipe through `pino-pretty` to read them): one format to parse and ship. */
export function createLogger(level: string, name = 'mailer', destination?: pino.DestinationStream): Logger {
  return pino({
    name, level, base: undefined, timestamp: pino.stdTimeFunctions.isoTime,
    mixin: (_obj, _level, logger) => contextFields(logger as Logger),
  }, destination);
}
