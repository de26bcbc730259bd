import { Args } from '@oclif/core';
import { EmailCommand } from '../../lib/base-command.js';
import { showBatchJob } from '../../lib/show.js';

export default class BatchesGet extends EmailCommand {
  static override summary = 'Show one batch job and its counters.';
  static override description = 'Its emails: `emails list --job-id <id>`.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> bat_01JZ8Q4V6T3N2K5M7P9R0S1T2U',
    '<%= config.bin %> <%= command.id %> bat_01JZ8Q4V6T3N2K5M7P9R0S1T2U --json',
  ];

  static override args = { id: Args.string({ description: 'Batch job id (bat_...).', required: true }) };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(BatchesGet);
    const api = await this.emailClient(flags);
    const job = await api.getBatchJob({ id: args.id });
    await this.print(flags.json, job, () => this.log(showBatchJob(job)));
  }
}
