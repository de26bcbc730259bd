import { Flags } from '@oclif/core';
import { emailCommand } from '../../lib/define-command.js';
import { clip, list, pageLine, table } from '../../lib/format.js';

export default emailCommand({
  summary: 'List scheduled emails, newest first.',
  description: 'The status filter `scheduled` lists those still waiting (shown as `enqueued`).',
  examples: ['', '--status scheduled --limit 100', '--status cancelled --page 2 --json'],
  flags: {
    status: Flags.option({
      options: ['scheduled', 'sent', 'cancelled'] as const,
      summary: 'Only scheduled emails in this state.',
    })(),
    page: Flags.integer({ summary: 'Page number, from 1.', default: 1, min: 1 }),
    limit: Flags.integer({ summary: 'Items per page (up to 100).', default: 20, min: 1, max: 100 }),
  },
  call: (api, { flags }) =>
    api.listScheduledEmails({ page: flags.page, limit: flags.limit, status: flags.status ?? '' }),
  show: (res, { flags }) =>
    `${table(
      ['ID', 'STATUS', 'SCHEDULED AT', 'FROM', 'TO', 'SUBJECT', 'ATTEMPTS'],
      res.scheduledEmails.map((s) => [
        s.id,
        s.status,
        s.scheduledAt,
        s.from,
        clip(list(s.to), 40),
        clip(s.subject),
        String(s.attempts),
      ]),
    )}\n${pageLine(flags.page, flags.limit, res.totalCount)}`,
});
