import { Flags } from '@oclif/core';
import { emailCommand } from '../../lib/define-command.js';
import { clip, list, pageLine, table } from '../../lib/format.js';

export default emailCommand({
  summary: 'List emails, newest first, with filters and pagination.',
  examples: [
    '',
    '--status bounced --page 2 --page-size 50',
    '--job-type batch --job-id bat_01JZ8Q4V6T3N2K5M7P9R0S1T2U --json',
    '--stream broadcast',
  ],
  flags: {
    status: Flags.option({
      options: ['pending', 'sent', 'delivered', 'bounced', 'complained'] as const,
      summary: 'Only emails in this status.',
    })(),
    'job-type': Flags.option({
      options: ['direct', 'scheduled', 'batch'] as const,
      summary: 'Only emails from this source.',
    })(),
    'job-id': Flags.string({ summary: 'Only emails of this scheduled email (sch_...) or batch job (bat_...).' }),
    stream: Flags.option({
      options: ['transactional', 'broadcast'] as const,
      summary: 'Only emails of this stream.',
    })(),
    page: Flags.integer({ summary: 'Page number, from 1.', default: 1, min: 1 }),
    'page-size': Flags.integer({ summary: 'Emails per page (up to 100).', default: 20, min: 1, max: 100 }),
  },
  call: (api, { flags }) =>
    api.listEmails({
      page: flags.page,
      pageSize: flags['page-size'],
      status: flags.status ?? '',
      jobType: flags['job-type'] ?? '',
      jobId: flags['job-id'] ?? '',
      stream: flags.stream ?? '',
    }),
  show: (res, { flags }) =>
    `${table(
      ['ID', 'STATUS', 'FROM', 'TO', 'SUBJECT', 'CREATED'],
      res.data.map((e) => [e.id, e.status, e.from, clip(list(e.to), 40), clip(e.subject), e.createdAt]),
    )}\n` + pageLine(flags.page, flags['page-size'], res.total),
});
