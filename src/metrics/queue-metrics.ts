import { Counter, Gauge, type Registry } from 'prom-client';
import type { QueueStats } from '../domain/entities/delivery.js';

/** How long a scrape waits for the queue's statistics before leaving them out. */
export const QUEUE_STATS_TIMEOUT_MS = 1000;

/**
 * The delivery queue, read at scrape time (one statement, cut off after a second): it is shared by every
 * process, so every role reports it, the API role included, which is what still answers when the workers
 * that drain the queue are down. A scrape whose statement failed (or took too long) has no depth series,
 * the age NaN, and counts the failure.
 */
export function queueMetrics(
  registry: Registry,
  read: ((timeoutMs: number) => Promise<QueueStats>) | undefined,
  onError: (err: unknown) => void,
) {
  const depth = new Gauge({
    name: 'mailer_delivery_queue_depth',
    help: 'Accepted emails in the delivery queue, by state: waiting (for a delivery workflow) or claimed (handed to one, the first attempt not yet done). Emails retried after a temporary failure are no longer counted here.',
    labelNames: ['state'] as const,
    registers: [registry],
  });
  const oldest = new Gauge({
    name: 'mailer_delivery_queue_oldest_age_seconds',
    help: 'Age of the oldest email in the delivery queue (0 when it is empty).',
    registers: [registry],
  });
  const failures = new Counter({
    name: 'mailer_delivery_queue_read_failures_total',
    help: 'Scrapes whose reading of the delivery queue failed or took over a second (the queue gauges are then absent or NaN).',
    registers: [registry],
  });
  return {
    /** Reads the queue into the gauges (or clears them when the read fails), before the registry is rendered. */
    async refreshQueueGauges(): Promise<void> {
      if (!read) return;
      try {
        const stats = await read(QUEUE_STATS_TIMEOUT_MS);
        depth.set({ state: 'waiting' }, stats.waiting);
        depth.set({ state: 'claimed' }, stats.claimed);
        oldest.set(stats.oldestAgeSeconds);
      } catch (err) {
        depth.reset();
        oldest.set(Number.NaN);
        failures.inc();
        onError(err);
      }
    },
  };
}
