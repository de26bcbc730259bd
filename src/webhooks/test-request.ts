import { postWebhook, type PostResult } from './post.js';
import { webhookHeaders } from './request.js';

/**
 * Verify's request: signed like every delivery, with the event `test` (CONTRACT.md) and no email. Its
 * `X-Mail-Delivery-Id` (and `webhook-id`) is fresh, since no stored event stands behind it. During a
 * secret rotation's overlap it is signed with both secrets, like deliveries.
 */
export function sendTestRequest(
  webhook: { id: string; url: string; secrets: readonly string[] },
  options: { allowPrivate: boolean },
): Promise<PostResult> {
  const at = new Date();
  const body = JSON.stringify({
    event: 'test',
    timestamp: at.toISOString(),
    data: {
      webhook_id: webhook.id,
      message: 'A test request from the Verify action: answer 2xx to confirm this URL receives events.',
    },
  });
  return postWebhook(
    webhook.url,
    body,
    webhookHeaders(webhook.secrets, 'test', body, `whd_test_${at.getTime()}`, at),
    options,
  );
}
