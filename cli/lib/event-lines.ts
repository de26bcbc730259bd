import type { MailEvent } from '../../src/gen/mail/v1/email_service_pb.js';

/** The event types a filter may name (the API's vocabulary). */
export const EVENT_TYPE_OPTIONS = ['send', 'delivery', 'bounce', 'complaint', 'reject', 'open', 'click'] as const;

/** `2026-05-01T12:00:00.000Z  delivery   em_...  rcpt@example.net  evt_...`: one event per line, for people. */
export function eventLine(e: MailEvent): string {
  return [e.timestamp, e.event.padEnd(9), e.email?.id ?? '', (e.email?.to ?? []).join(', '), e.id].join('  ');
}
