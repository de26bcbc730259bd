import { Flags } from '@oclif/core';
import { EmailCommand } from '../../lib/base-command.js';
import { pageLine, table } from '../../lib/format.js';
import { BATCH_JOB_HEADERS, batchJobRows } from '../../lib/show.js';

export default class BatchesList extends EmailCommand {
  static override summary = 'List batch jobs, newest first.';
  static override examples = [
    '<%= config.bin %> <%= command.id %>',
    '<%= config.bin %> <%= command.id %> --status processing',
    '<%= config.bin %> <%= command.id %> --page 2 --limit 50 --json',
  ];

  static override flags = {
    status: Flags.option({ options: ['pending', 'processing', 'completed', 'failed'] as const, summary: 'Only jobs in this state.' })(),
    page: Flags.integer({ summary: 'Page number, from 1.', default: 1, min: 1 }),
    limit: Flags.integer({ summary: 'Jobs per page (up to 100).', default: 20, min: 1, max: 100 }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(BatchesList);
    const api = await this.emailClient(flags);
    const res = await api.listBatchJobs({ page: flags.page, limit: flags.limit, status: flags.status ?? '' });
    await this.print(flags.json, res, () => {
      this.log(table(BATCH_JOB_HEADERS, batchJobRows(res.batchJobs)));
      this.log(pageLine(flags.page, flags.limit, res.totalCount));
    });
  }
}
