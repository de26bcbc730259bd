import { Flags } from '@oclif/core';
import { idOf } from '../../lib/command-parts.js';
import { adminCommand } from '../../lib/define-command.js';

export default adminCommand({
  summary:
    'Send again the discarded deliveries of a webhook whose events came in a time range (at most 1000 per call).',
  ...idOf(
    'Webhook',
    'wh',
    '--from 2026-01-31T00:00:00Z',
    '--from 2026-01-31T00:00:00Z --to 2026-02-01T00:00:00Z --json',
  ),
  flags: {
    from: Flags.string({ summary: 'Start of the range, ISO 8601 (inclusive).', required: true }),
    to: Flags.string({ summary: 'End of the range, ISO 8601 (exclusive; default now).' }),
  },
  call: (api, { args, flags }) => api.resendWebhookDeliveries({ id: args.id, from: flags.from, to: flags.to ?? '' }),
  show: (res, { args }) =>
    `Queued ${res.queued} discarded deliveries of ${args.id} again` +
    (res.hasMore ? '; more are left in the range: run this again' : ''),
});
