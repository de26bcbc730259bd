import { Flags } from '@oclif/core';
import { idOf } from '../../lib/command-parts.js';
import { adminCommand } from '../../lib/define-command.js';
import { table } from '../../lib/format.js';

export default adminCommand({
  summary: 'Events sent to a webhook, newest first, with every attempt.',
  ...idOf('Webhook', 'wh', '', '--status discarded --json'),
  flags: {
    status: Flags.option({
      options: ['pending', 'succeeded', 'discarded'] as const,
      summary: 'Only deliveries in this status.',
    })(),
    limit: Flags.integer({ summary: 'How many (default 50, at most 100).', min: 1, max: 100 }),
  },
  call: (api, { args, flags }) =>
    api.listWebhookDeliveries({ id: args.id, status: flags.status ?? '', limit: flags.limit ?? 0 }),
  show: (res) =>
    table(
      ['ID', 'EVENT', 'EMAIL', 'STATUS', 'ATTEMPTS', 'CREATED'],
      res.deliveries.map((d) => [
        d.id,
        d.eventType,
        // An inbound event is about an inbound email, no email we sent.
        d.emailId ?? d.inboundId ?? '',
        d.status,
        d.attempts.map((a) => (a.statusCode === 0 ? a.error || 'no answer' : String(a.statusCode))).join(' → '),
        d.createdAt,
      ]),
    ),
});
