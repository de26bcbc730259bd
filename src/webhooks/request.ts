import { signatureFor } from './signature.js';
import {
  STANDARD_ID_HEADER,
  STANDARD_SIGNATURE_HEADER,
  STANDARD_TIMESTAMP_HEADER,
  standardSignatureFor,
} from './standard-signature.js';

/**
 * The headers of every webhook request (spec: Request headers), plus `X-Mail-Delivery-Id`, stable across
 * the retries of one event to one webhook, and the Standard Webhooks headers over the same body and
 * timestamp (`webhook-id` is the delivery id). The User-Agent is added by the POST itself.
 *
 * `secrets` is the webhook's current secret, then, during a rotation's overlap, the previous one: the
 * current one signs `X-Mail-Signature` exactly as before, the previous one `X-Mail-Signature-Previous`
 * (same format), and `webhook-signature` carries one signature per secret, space-separated.
 */
export function webhookHeaders(
  secrets: readonly string[],
  event: string,
  body: string,
  deliveryId: string,
  at: Date,
): Record<string, string> {
  const [current, previous] = secrets;
  if (current === undefined) throw new Error('a webhook request needs its secret');
  const timestamp = String(Math.floor(at.getTime() / 1000));
  return {
    'content-type': 'application/json',
    'x-mail-event': event,
    'x-mail-timestamp': timestamp,
    'x-mail-signature': signatureFor(current, timestamp, body),
    ...(previous !== undefined ? { 'x-mail-signature-previous': signatureFor(previous, timestamp, body) } : {}),
    'x-mail-delivery-id': deliveryId,
    [STANDARD_ID_HEADER]: deliveryId,
    [STANDARD_TIMESTAMP_HEADER]: timestamp,
    [STANDARD_SIGNATURE_HEADER]: secrets.map((s) => standardSignatureFor(s, deliveryId, timestamp, body)).join(' '),
  };
}
