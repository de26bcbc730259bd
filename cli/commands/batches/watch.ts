import { Args, Flags } from '@oclif/core';
import { EmailCommand } from '../../lib/base-command.js';
import { followBatchJob, ProgressBar } from '../../lib/progress.js';
import { showBatchJob } from '../../lib/show.js';

export default class BatchesWatch extends EmailCommand {
  static override summary = 'Follow a batch job with a live progress bar until it is completed or failed.';
  static override description = 'The progress bar goes to stderr; the finished job to stdout (as JSON with --json).';
  static override examples = [
    '<%= config.bin %> <%= command.id %> bat_01JZ8Q4V6T3N2K5M7P9R0S1T2U',
    '<%= config.bin %> <%= command.id %> bat_01JZ8Q4V6T3N2K5M7P9R0S1T2U --json',
  ];

  static override args = { id: Args.string({ description: 'Batch job id (bat_...).', required: true }) };
  static override flags = {
    interval: Flags.integer({ summary: 'Milliseconds between progress polls.', default: 500, min: 100, hidden: true }),
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(BatchesWatch);
    const showProgress = !flags.json || process.stderr.isTTY;
    const bar = new ProgressBar();
    const job = await followBatchJob(await this.emailClient(flags), args.id, (j) => showProgress && bar.update(j), flags.interval);
    bar.done();
    await this.print(flags.json, job, () => this.log(showBatchJob(job)));
  }
}
