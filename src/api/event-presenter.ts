import type { JsonObject, MessageInitShape } from '@bufbuild/protobuf';
import type { FeedEvent } from '../domain/entities/events.js';
import { webhookEnvelope } from '../domain/events.js';
import type { MailEventSchema } from '../gen/mail/v1/email_service_pb.js';

/**
 * An event of GET /events, built by the very function that builds its webhook body, so the two carry the
 * same fields and values (the proto message spells that body's JSON, field for field).
 */
export function presentMailEvent(e: FeedEvent): MessageInitShape<typeof MailEventSchema> {
  const body = webhookEnvelope(e.type, e.at, e.email, e.data, e.id);
  const common = { id: e.id, event: body.event, timestamp: body.timestamp, data: body.data as JsonObject };
  // An `inbound` event has no email: the message field stays unset, so its JSON has no `email`, as the webhook's.
  if (body.email === undefined) return common;
  const { sent_at: sentAt, message_id: messageId, ...email } = body.email;
  return { ...common, email: { ...email, messageId, ...(sentAt === undefined ? {} : { sentAt }) } };
}
