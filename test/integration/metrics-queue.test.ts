import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { QUEUE_STATS_TIMEOUT_MS } from '../../src/metrics/queue-metrics.js';
import { createSender } from '../helpers/admin-fixtures.js';
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

describe('the failing-domains gauge (MAILER_ROLE=api)', () => {
  it('counts verified domains whose DNS check found their records failing, read at each scrape', async () => {
    const failing = async () => (await scrape(stack.mailer.restUrl!)).sum('mailer_domains_dns_failing');
    const start = await failing();
    const a = await createSender(stack, 'dns-gauge-a', 'dns-gauge-a.example');
    const b = await createSender(stack, 'dns-gauge-b', 'dns-gauge-b.example');
    const sql = postgres(stack.databaseUrl, { max: 1, onnotice: () => {} });
    try {
      // What the periodic DNS re-check writes when a verified domain's records go wrong (domain-dns-check.ts).
      const markFailing = (id: string, since: Date | null) =>
        sql`update domains set dns_failing_since = ${since} where id = ${id}`;
      expect(await failing()).toBe(start);
      await markFailing(a.domainId, new Date());
      await markFailing(b.domainId, new Date());
      expect(await failing()).toBe(start + 2);
      // An unverified domain's records are not judged: it is not counted however it is marked.
      await sql`update domains set verified_at = null where id = ${b.domainId}`;
      expect(await failing()).toBe(start + 1);
      await markFailing(a.domainId, null);
      expect(await failing()).toBe(start);
    } finally {
      await sql.end();
    }
  });
});
