import { signatureFor } from './signature.js';

/**
 * The headers of every webhook request (spec: Request headers), plus `X-Mail-Delivery-Id`, stable across
 * the retries of one event to one webhook. The User-Agent is added by the POST itself.
 */
export function webhookHeaders(secret: string, event: string, body: string, deliveryId: string, at: Date): Record<string, string> {
  const timestamp = String(Math.floor(at.getTime() / 1000));
  return {
    'content-type': 'application/json',
    'x-mail-event': event,
    'x-mail-timestamp': timestamp,
    'x-mail-signature': signatureFor(secret, timestamp, body),
    'x-mail-delivery-id': deliveryId,
  };
}
