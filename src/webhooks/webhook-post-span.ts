import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import {
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_SERVER_ADDRESS,
} from '@opentelemetry/semantic-conventions';
import type { DeliveryToSend } from '../domain/entities/webhooks.js';
import { inSpan, spanLinkTo } from '../telemetry/spans.js';
import type { PostResult } from './post.js';

/**
 * The POST as a client span (under the retry activity's, or a root one for the dispatcher's first attempt):
 * the receiver's host (never the URL's path or query, which may hold a secret) and its status. Linked to the
 * span the email was accepted under, as the event is a consequence of that email rather than part of its request.
 */
export function tracedPost(d: DeliveryToSend, attempt: number, post: () => Promise<PostResult>): Promise<PostResult> {
  // An inbound event has no email, so no request it is a consequence of.
  const links = spanLinkTo(d.email?.traceparent);
  return inSpan(
    'webhook POST',
    {
      kind: SpanKind.CLIENT,
      links,
      attributes: {
        [ATTR_HTTP_REQUEST_METHOD]: 'POST',
        [ATTR_SERVER_ADDRESS]: hostOf(d.webhook?.url ?? ''),
        'mailer.webhook.delivery_id': d.id,
        'mailer.webhook.event': d.event.type,
        ...(d.email ? { 'mailer.email.id': d.email.id } : { 'mailer.inbound.id': d.event.inboundId ?? '' }),
        'mailer.webhook.attempt': attempt,
      },
    },
    async (span) => {
      const result = await post();
      span?.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, result.statusCode);
      if (span && (result.statusCode < 200 || result.statusCode >= 300)) {
        span.setStatus({ code: SpanStatusCode.ERROR, message: result.error ?? `HTTP ${result.statusCode}` });
      }
      return result;
    },
  );
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '';
  }
}
