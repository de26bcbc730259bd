import { Flags } from '@oclif/core';
import { adminCommand, idArg } from '../../lib/define-command.js';
import { table } from '../../lib/format.js';

export default adminCommand({
  summary: 'Events sent to a webhook, newest first, with every attempt.',
  examples: ['wh_01JZ8Q4V6T3N2K5M7P9R0S1T2U', 'wh_01JZ8Q4V6T3N2K5M7P9R0S1T2U --status discarded --json'],
  args: { id: idArg('Webhook id (wh_...).') },
  flags: {
    status: Flags.option({ options: ['pending', 'succeeded', 'discarded'] as const, summary: 'Only deliveries in this status.' })(),
    limit: Flags.integer({ summary: 'How many (default 50, at most 100).', min: 1, max: 100 }),
  },
  call: (api, { args, flags }) => api.listWebhookDeliveries({ id: args.id, status: flags.status ?? '', limit: flags.limit ?? 0 }),
  show: (res) => table(['ID', 'EVENT', 'EMAIL', 'STATUS', 'ATTEMPTS', 'CREATED'], res.deliveries.map((d) => [
    d.id, d.eventType, d.emailId, d.status,
    d.attempts.map((a) => (a.statusCode === 0 ? a.error || 'no answer' : String(a.statusCode))).join(' → '), d.createdAt,
  ])),
});
