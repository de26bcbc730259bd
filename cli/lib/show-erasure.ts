import type { ErasureResult } from '../../src/gen/mail/v1/admin_service_pb.js';
import { table } from './format.js';

/** What an erasure rewrote or deleted, one line per kind, and a hint when pending mail was left. */
export function showErasure(r: ErasureResult, what: string): string {
  const rows: [string, number][] = [
    ['emails', r.emails],
    ['scheduled_emails', r.scheduledEmails],
    ['attachments', r.attachments],
    ['events', r.events],
    ['webhook_attempts', r.webhookAttempts],
    ['tracking_windows', r.trackingWindows],
    ['caught_messages', r.caughtMessages],
    ['suppressions (kept as a digest)', r.suppressions],
    ['idempotency_keys', r.idempotencyKeys],
    ['inbound_emails (deleted)', r.inboundEmails],
  ];
  const lines = [
    `Erased ${what}`,
    table(
      ['WHAT', 'COUNT'],
      rows.map(([k, n]) => [k, String(n)]),
    ),
  ];
  if (r.skippedPending > 0) {
    lines.push(
      `${r.skippedPending} emails still being delivered or scheduled (or inbound emails whose webhook delivery is pending) were left as they are: run this again once they are done (or cancel the scheduled ones)`,
    );
  }
  return lines.join('\n');
}
