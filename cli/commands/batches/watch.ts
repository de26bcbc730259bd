import { Flags } from '@oclif/core';
import { idOf } from '../../lib/command-parts.js';
import { emailCommand } from '../../lib/define-command.js';
import { followBatchJob, ProgressBar } from '../../lib/progress.js';
import { showBatchJob } from '../../lib/show.js';

export default emailCommand({
  summary: 'Follow a batch job with a live progress bar until it is completed or failed.',
  description: 'The progress bar goes to stderr; the finished job to stdout (as JSON with --json).',
  ...idOf('Batch job', 'bat', '', '--json'),
  flags: {
    interval: Flags.integer({ summary: 'Milliseconds between progress polls.', default: 500, min: 100, hidden: true }),
  },
  async call(api, { args, flags }) {
    const showProgress = !flags.json || process.stderr.isTTY;
    const bar = new ProgressBar();
    const job = await followBatchJob(api, args.id, (j) => showProgress && bar.update(j), flags.interval);
    bar.done();
    return job;
  },
  show: showBatchJob,
});
