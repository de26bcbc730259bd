import { describe, expect, it } from 'vitest';
import type { WebhookDeliveriesRepo } from '../../src/db/index.js';
import type { Logger } from '../../src/logger.js';
import { createWebhookActivities } from '../../src/webhooks/webhook-activities.js';
import { WEBHOOK_LAST_ATTEMPT } from '../../src/webhooks/webhook-attempt.js';
import { WEBHOOK_RETRY } from '../../workflows/deliver-webhooks.js';

/** The activities' own decisions, with the repository and the logger faked at their seams. */
function setup(discard: WebhookDeliveriesRepo['discard'], loadForSending?: WebhookDeliveriesRepo['loadForSending']) {
  const logged: { level: string; fields: Record<string, unknown>; msg: string }[] = [];
  const log = (level: string) => (fields: Record<string, unknown>, msg: string) => logged.push({ level, fields, msg });
  const posts: string[] = [];
  const activities = createWebhookActivities({
    webhookDeliveries: { discard, loadForSending } as unknown as WebhookDeliveriesRepo,
    post: async (url) => {
      posts.push(url);
      return { statusCode: 200, latencyMs: 1, excerpt: '' };
    },
    logger: { info: log('info'), warn: log('warn') } as unknown as Logger,
    disableThreshold: { discards: 10, hours: 24 },
  });
  return { activities, logged, posts };
}

describe('webhook activities: disabling', () => {
  it('a discard after the last attempt counts towards the threshold; the one that disables warns the operator', async () => {
    const calls: unknown[][] = [];
    const { activities, logged } = setup(async (...args) => {
      calls.push(args);
      return calls.length === 2 ? { disabledWebhook: { id: 'wh_1', reason: '10 deliveries in a row discarded' } } : {};
    });
    await activities.discardWebhook({ deliveryId: 'whd_1' });
    expect(calls[0]).toEqual(['whd_1', 'retries_exhausted', { discards: 10, hours: 24 }]);
    expect(logged.filter((l) => l.level === 'warn')).toEqual([]);
    await activities.discardWebhook({ deliveryId: 'whd_2' });
    expect(logged.filter((l) => l.level === 'warn')).toEqual([
      {
        level: 'warn',
        fields: { webhookId: 'wh_1', reason: '10 deliveries in a row discarded' },
        msg: expect.stringMatching(/^webhook disabled: .*enable/),
      },
    ]);
  });

  it('a delivery of a webhook disabled since it was queued is discarded unattempted, not counted', async () => {
    const calls: unknown[][] = [];
    const { activities, posts } = setup(
      async (...args) => {
        calls.push(args);
        return {};
      },
      async () =>
        ({
          id: 'whd_3',
          status: 'pending',
          webhook: { id: 'wh_1', url: 'http://x', secrets: ['whsec_a'], disabled: true },
          email: { id: 'em_1' },
        }) as never,
    );
    expect(await activities.sendWebhook({ deliveryId: 'whd_3' })).toBe('skipped');
    expect(calls).toEqual([['whd_3', 'webhook_disabled']]);
    expect(posts).toEqual([]);
  });

  it("counts an attempt as the last (failed, not retrying) at the workflow's own last attempt", () => {
    // The attempt runs outside the workflow (in the dispatcher too), so it knows the schedule's length as a constant.
    expect(WEBHOOK_RETRY.maximumAttempts).toBe(WEBHOOK_LAST_ATTEMPT);
  });
});
