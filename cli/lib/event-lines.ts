import type { MailEvent } from '../../src/gen/mail/v1/email_service_pb.js';

/** The event types a filter may name (the API's vocabulary). */
export const EVENT_TYPE_OPTIONS = [
  'send',
  'delivery',
  'bounce',
  'complaint',
  'reject',
  'open',
  'click',
  'unsubscribe',
  'inbound',
  'reply',
] as const;

/**
 * `2026-05-01T12:00:00.000Z  delivery   em_...  rcpt@example.net  evt_...`: one event per line, for people. An
 * `inbound` event has no email: its line names the inbound email (`in_...`) and whom it was sent to.
 */
export function eventLine(e: MailEvent): string {
  const inbound = e.email === undefined ? e.data : undefined;
  const id = e.email?.id ?? (typeof inbound?.id === 'string' ? inbound.id : '');
  const to = e.email?.to ?? (Array.isArray(inbound?.to) ? inbound.to.map(String) : []);
  return [e.timestamp, e.event.padEnd(9), id, to.join(', '), e.id].join('  ');
}
