import type { JobsContext } from '../lib/context.js';
import { percentiles } from '../lib/load.js';
import { admin, type ServiceHandle } from '../lib/service.js';
import { ms } from './webhook-latency.js';
import { RETRY_EMAILS, type Deliveries, type WebhookSetup } from './webhook-load.js';

/**
 * Retry gaps: the always-500 account's deliveries, the gaps between the attempts of each delivery
 * (X-Mail-Delivery-Id) at the recorder, and what the management API says of each at the end (4
 * attempts, `discarded`).
 */
export interface RetryFigures {
  emails: number;
  deliveries: number;
  /** Per gap (1st -> 2nd attempt, 2nd -> 3rd, 3rd -> 4th): its figures over the deliveries that had it. */
  gaps: { wantMs: number; count: number; min: number; p50: number; max: number; within: number }[];
  /** Deliveries with exactly 4 attempts at the receiver and `discarded` with 4 attempts (all 500) in the management API. */
  fourThenDiscarded: number;
  detail: { id: string; arrivals: number[]; apiStatus: string | undefined; apiAttempts: number[] }[];
}

/** The retry policy under test (workflows/deliver-webhooks.ts): gaps of 1 s, 2 s, 4 s, 4 attempts. */
export const RETRY_GAPS_MS = [1000, 2000, 4000];
/** How late a retry may come (gap above its interval) and still count. */
export const RETRY_TOLERANCE_MS = 500;

export async function webhookRetries(
  ctx: JobsContext,
  service: ServiceHandle,
  setup: WebhookSetup,
  failAccepted: number,
): Promise<RetryFigures> {
  const failHooks = setup.recorder.hooks.slice(setup.counted).filter((h) => h.path === '/fail');
  const byDelivery = new Map<string, number[]>();
  for (const h of failHooks) byDelivery.set(h.deliveryId, [...(byDelivery.get(h.deliveryId) ?? []), h.arrivedAt]);
  const all = (await admin<Deliveries>(service, 'GET', `/webhooks/${setup.fail.webhookId}/deliveries?limit=100`))
    .deliveries;
  const api = new Map(all.map((d) => [d.id, d]));
  const detail = [...byDelivery].map(([id, arrivals]) => {
    const sorted = arrivals.sort((a, b) => a - b);
    const d = api.get(id);
    return { id, arrivals: sorted, apiStatus: d?.status, apiAttempts: d?.attempts.map((a) => a.status_code) ?? [] };
  });
  for (const d of all)
    if (!byDelivery.has(d.id))
      detail.push({ id: d.id, arrivals: [], apiStatus: d.status, apiAttempts: d.attempts.map((a) => a.status_code) });
  const gaps = RETRY_GAPS_MS.map((wantMs, k) => {
    const values = detail.filter((d) => d.arrivals.length > k + 1).map((d) => d.arrivals[k + 1]! - d.arrivals[k]!);
    const p = percentiles(values);
    return {
      wantMs,
      count: values.length,
      min: values.length > 0 ? Math.min(...values) : NaN,
      p50: p.p50,
      max: p.max,
      within: values.filter((v) => v >= wantMs && v <= wantMs + RETRY_TOLERANCE_MS).length,
    };
  });
  const fourThenDiscarded = detail.filter(
    (d) =>
      d.arrivals.length === 4 &&
      d.apiStatus === 'discarded' &&
      d.apiAttempts.length === 4 &&
      d.apiAttempts.every((c) => c === 500),
  ).length;
  ctx.addRow({
    key: 'webhook-retries',
    what: 'webhooks: always-500 receiver, gaps between attempts',
    value: detail.length,
    unit: 'deliveries',
    notes: [
      `${failAccepted} emails sent 0.5 to ${((500 + (RETRY_EMAILS - 1) * 300) / 1000).toFixed(1)} s into the load; ${detail.length} deliveries, ${failHooks.length} attempts at the receiver`,
      ...gaps.map(
        (g, k) =>
          `gap ${k + 1} (attempt ${k + 1} -> ${k + 2}, want ${g.wantMs} ms): ${g.count} deliveries, min ${ms(g.min)}, p50 ${ms(g.p50)}, max ${ms(g.max)} ms; ${g.within} within +${RETRY_TOLERANCE_MS} ms`,
      ),
      `per delivery (attempts at the receiver; management API status and status codes): ` +
        detail.map((d) => `${d.arrivals.length} ${d.apiStatus ?? '?'} [${d.apiAttempts.join(',')}]`).join('; '),
    ],
    detail: {
      deliveries: detail.map((d) => ({ ...d, gapsMs: d.arrivals.slice(1).map((t, i) => t - d.arrivals[i]!) })),
    },
  });
  return { emails: failAccepted, deliveries: detail.length, gaps, fourThenDiscarded, detail };
}
