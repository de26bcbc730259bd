import { setTimeout as sleep } from 'node:timers/promises';
import type { JobsContext } from '../lib/context.js';
import type { ServiceHandle } from '../lib/service.js';
import { webhookLatency, type LatencyFigures } from './webhook-latency.js';
import { RETRY_EMAILS, sendWebhookLoad, setUpWebhooks, waitForWebhooks } from './webhook-load.js';
import { webhookRetries, type RetryFigures } from './webhook-retries.js';

/**
 * The webhook figures (bench/README.md, "Webhooks"), on the service the other parts use, with a webhook
 * recorder (an HTTP server on loopback) in the bench process:
 *
 * - event -> receiver latency: an account whose webhook is subscribed to `delivery` sends emails at a
 *   fixed rate through the public API (bench/parts/webhook-latency.ts);
 * - retry gaps: a second account whose webhook always answers 500 sends a few emails while that load runs
 *   (bench/parts/webhook-retries.ts).
 */
export interface WebhooksContext extends JobsContext {
  /** The service's database, read (only) for the split of each delivery's latency. */
  databaseUrl: string;
}

export type WebhooksResult = { rate: number; durationS: number; accepted: number } & LatencyFigures & {
    retry: RetryFigures;
  };

/**
 * `rate` sends a second for `durationS` on the latency account, then waits at most `waitCapMs` for the
 * last webhooks and for the failing deliveries to be discarded.
 */
export async function webhookFigures(
  ctx: WebhooksContext,
  service: ServiceHandle,
  rate: number,
  durationS: number,
  waitCapMs: number,
): Promise<WebhooksResult> {
  const setup = await setUpWebhooks(service);
  ctx.log(
    `webhooks: ${rate}/s sends for ${durationS} s on an account with a delivery webhook; ${RETRY_EMAILS} emails to an always-500 webhook`,
  );
  const w = ctx.window();
  const load = await sendWebhookLoad(service, setup, rate, durationS);
  const wait = await waitForWebhooks(service, setup, load, waitCapMs);
  // CPU from the first send to the last webhook: everything the load cost, webhooks included.
  const cpu = w.stop();
  // A moment more: anything still coming (a duplicate, a fifth attempt) would be seen.
  await sleep(500);
  const latency = await webhookLatency(ctx, setup, load, { rate, durationS, cpu, ...wait });
  const retry = await webhookRetries(ctx, service, setup, load.failAccepted);
  await setup.recorder.close();
  return {
    rate,
    durationS,
    accepted: load.accepted.length,
    delivered: latency.delivered,
    requests: latency.requests,
    latencyMs: latency.latencyMs,
    exactlyOnce: latency.exactlyOnce,
    duplicates: latency.duplicates,
    missing: latency.missing,
    badSignatures: latency.badSignatures,
    retry,
  };
}
