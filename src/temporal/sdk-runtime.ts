import { MetricsBuffer, Runtime, type LogMetadata, type Logger as TemporalLogger } from '@temporalio/worker';
import type { Logger } from '../logger.js';
import { drainTemporalMetrics, setTemporalMetricsSource } from '../metrics/temporal-sdk-metrics.js';

/**
 * The Temporal SDK's Core runtime is one per process (Runtime.install throws the second time, and once a
 * worker has started without it); tests start many stacks in one process. So it is installed here once,
 * with the first caller's logger, and with the Core's metrics buffered in this process rather than served
 * on a bind address of their own: metrics/temporal-sdk-metrics.ts drains the buffer into the service's
 * /metrics (at each scrape, and every second so that the buffer never fills between scrapes). When every
 * worker of the process has stopped, the SDK shuts the runtime down and makes it again, with these same
 * options and buffer, for the next worker.
 */
let installed = false;

/** Updates kept between drains; past it the SDK drops updates (and logs so). A second of heavy load is far less. */
const MAX_BUFFERED_UPDATES = 200_000;
const DRAIN_EVERY_MS = 1000;

export function installTemporalRuntime(logger: Logger): void {
  if (installed) return;
  installed = true;
  const buffer = new MetricsBuffer({ maxBufferSize: MAX_BUFFERED_UPDATES, useSecondsForDurations: true });
  try {
    install(logger, buffer);
  } catch (err) {
    // Something in this process made a worker or native connection first (the SDK then made a default runtime).
    logger.warn(
      { err },
      'the Temporal SDK runtime was already made: its metrics are not exported and its logs not forwarded',
    );
    return;
  }
  setTemporalMetricsSource(() => buffer.retrieveUpdates());
  // A timer of its own would keep the process alive: unref'd, it only runs while something else does.
  setInterval(drainTemporalMetrics, DRAIN_EVERY_MS).unref();
}

function install(logger: Logger, buffer: MetricsBuffer): void {
  Runtime.install({ logger: sdkLogger(logger), telemetryOptions: { metrics: { buffer } } });
}

/**
 * The SDK's own logs through ours, at warn and above. The SDK names a failure `error` in its metadata ("Activity
 * failed", { error }); pino serialises an Error with its message, stack and causes only under `err` (an Error
 * under any other key is written `{}`, its fields being non-enumerable), so it is moved there.
 */
export function sdkLogger(logger: Logger): TemporalLogger {
  const fields = (meta: LogMetadata | undefined): object => {
    if (meta === undefined) return {};
    const { error, ...rest } = meta;
    return error instanceof Error && rest.err === undefined ? { ...rest, err: error } : meta;
  };
  return {
    log: (level, message, meta) => {
      if (level === 'WARN') logger.warn(fields(meta), message);
      else if (level === 'ERROR') logger.error(fields(meta), message);
    },
    trace: () => {},
    debug: () => {},
    info: () => {},
    warn: (message, meta) => logger.warn(fields(meta), message),
    error: (message, meta) => logger.error(fields(meta), message),
  };
}
