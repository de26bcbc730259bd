import { pino } from 'pino';
import { PinoPretty } from 'pino-pretty';
import type { LogFormat, LogFormatSetting } from './config.js';
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
  // pino keeps a logger's bindings as the JSON text it prints (`,"reqId":"..."`), under a symbol its types
  // leave out; reading that text is cheaper on every line than parsing it back with logger.bindings().
  const bound = pino.symbols.chindingsSym in logger ? logger[pino.symbols.chindingsSym] : undefined;
  if (typeof bound !== 'string' || !bound.includes('"reqId":')) return { ...fields };
  const { reqId: _reqId, ...rest } = fields;
  return rest;
}

/**
 * MAILER_LOG_FORMAT's `auto`: pretty for a person at a terminal, JSON wherever stdout is read by a program
 * (CI, docker, systemd, a pipe), which is where lines are parsed and shipped.
 */
export function resolveLogFormat(setting: LogFormatSetting, stdoutIsTty: boolean | undefined): LogFormat {
  if (setting !== 'auto') return setting;
  return stdoutIsTty === true ? 'pretty' : 'json';
}

/**
 * Log lines on stdout (or into `destination`): JSON lines by default, one format to parse and ship; `pretty`
 * formats them for reading in a terminal (pino-pretty, in this thread and synchronously, as pino's own stdout
 * is, so that the lines before a process.exit are not lost).
 */
export function createLogger(
  level: string,
  name = 'mailer',
  destination?: pino.DestinationStream,
  format: LogFormat = 'json',
): Logger {
  // Colours on stdout as pino-pretty decides (a terminal, NO_COLOR, FORCE_COLOR); never into a given stream.
  const output =
    format === 'pretty'
      ? PinoPretty({
          translateTime: 'SYS:HH:MM:ss.l',
          sync: true,
          ...(destination ? { destination, colorize: false } : { destination: 1 }),
        })
      : destination;
  return pino(
    {
      name,
      level,
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      mixin: (_obj, _level, logger) => contextFields(logger),
    },
    output,
  );
}
