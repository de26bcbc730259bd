import { Flags } from '@oclif/core';
import { emailCommand } from '../../lib/define-command.js';
import { pageLine, table } from '../../lib/format.js';
import { BATCH_JOB_HEADERS, batchJobRows } from '../../lib/show.js';

export default emailCommand({
  summary: 'List batch jobs, newest first.',
  examples: ['', '--status processing', '--page 2 --limit 50 --json'],
  flags: {
    status: Flags.option({
      options: ['pending', 'processing', 'completed', 'failed'] as const,
      summary: 'Only jobs in this state.',
    })(),
    page: Flags.integer({ summary: 'Page number, from 1.', default: 1, min: 1 }),
    limit: Flags.integer({ summary: 'Jobs per page (up to 100).', default: 20, min: 1, max: 100 }),
  },
  call: (api, { flags }) => api.listBatchJobs({ page: flags.page, limit: flags.limit, status: flags.status ?? '' }),
  show: (res, { flags }) =>
    `${table(BATCH_JOB_HEADERS, batchJobRows(res.batchJobs))}\n${pageLine(flags.page, flags.limit, res.totalCount)}`,
});
