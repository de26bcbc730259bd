import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { QUEUE_STATS_TIMEOUT_MS } from '../../src/metrics/queue-metrics.js';
import { call, validEmail } from '../helpers/http.js';
import { scrape } from '../helpers/prometheus.js';
import { useStack } from '../helpers/use-stack.js';

/**
 * The delivery queue as /metrics reports it, from an API-role process: with no worker to drain it, what
 * is accepted stays queued, which is the very state an operator alerts on.
 */
const stack = useStack({ MAILER_ROLE: 'api' });

async function send(): Promise<void> {
  const res = await call('POST', `${stack.api}/emails`, { token: stack.apiKey, body: validEmail() });
  expect(res.status, res.text).toBe(200);
}

describe('the delivery queue gauges (MAILER_ROLE=api)', () => {
  it('count the emails waiting and the age of the oldest, read at each scrape', async () => {
    const empty = await scrape(stack.mailer.restUrl!);
    expect(empty.sum('mailer_delivery_queue_depth', { state: 'waiting' })).toBe(0);
    expect(empty.sum('mailer_delivery_queue_oldest_age_seconds')).toBe(0);

    await send();
    await new Promise((r) => setTimeout(r, 1100));
    await send();
    await send();
    const queued = await scrape(stack.mailer.restUrl!);
    expect(queued.sum('mailer_delivery_queue_depth', { state: 'waiting' })).toBe(3);
    expect(queued.sum('mailer_delivery_queue_depth', { state: 'claimed' })).toBe(0);
    const age = queued.sum('mailer_delivery_queue_oldest_age_seconds');
    expect(age).toBeGreaterThanOrEqual(1);
    expect(age).toBeLessThan(60);
  });

  it('leave a scrape on time when the queue cannot be read: no depth, the age NaN, the failure counted', async () => {
    const before = await scrape(stack.mailer.restUrl!);
    const sql = postgres(stack.databaseUrl, { max: 1, onnotice: () => {} });
    try {
      await sql.begin(async (tx) => {
        await tx`lock table delivery_queue in access exclusive mode`;
        const started = performance.now();
        const blocked = await scrape(stack.mailer.restUrl!);
        const took = performance.now() - started;
        expect(took).toBeGreaterThanOrEqual(QUEUE_STATS_TIMEOUT_MS - 50);
        expect(took).toBeLessThan(QUEUE_STATS_TIMEOUT_MS + 4000);
        expect(blocked.has('mailer_delivery_queue_depth')).toBe(false);
        expect(blocked.sum('mailer_delivery_queue_oldest_age_seconds')).toBeNaN();
        expect(
          blocked.sum('mailer_delivery_queue_read_failures_total') -
            before.sum('mailer_delivery_queue_read_failures_total'),
        ).toBe(1);
        // The rest of the scrape is there.
        expect(blocked.has('mailer_process_cpu_seconds_total')).toBe(true);
      });
    } finally {
      await sql.end();
    }
    const again = await scrape(stack.mailer.restUrl!);
    expect(again.sum('mailer_delivery_queue_depth', { state: 'waiting' })).toBe(3);
  });
});
