import type { Client } from '@connectrpc/connect';
import type { EmailService } from '../../src/gen/mail/v1/email_service_pb.js';
import type { BatchJob } from '../../src/gen/mail/v1/types_pb.js';

const isFinished = (job: BatchJob): boolean => job.status === 'completed' || job.status === 'failed';

const WIDTH = 30;

/** `[##########--------------------] 10/30  sent 9  failed 1  processing` */
export function progressLine(job: BatchJob): string {
  const done = job.sentCount + job.failedCount;
  const filled = job.totalCount > 0 ? Math.round((done / job.totalCount) * WIDTH) : 0;
  const bar = '#'.repeat(filled) + '-'.repeat(WIDTH - filled);
  return `[${bar}] ${done}/${job.totalCount}  sent ${job.sentCount}  failed ${job.failedCount}  ${job.status}`;
}

/**
 * A single-line progress bar on a stream: redrawn in place on a terminal; elsewhere (a pipe, a log)
 * one line each time the counters or the status change, so the output stays readable.
 */
export class ProgressBar {
  private last = '';
  private drawn = false;

  constructor(private readonly out: NodeJS.WriteStream = process.stderr) {}

  update(job: BatchJob): void {
    const line = progressLine(job);
    if (line === this.last) return;
    this.last = line;
    if (this.out.isTTY) {
      this.out.write(`\r\x1b[2K${line}`);
      this.drawn = true;
    } else {
      this.out.write(`${line}\n`);
    }
  }

  /** Ends the line on a terminal. */
  done(): void {
    if (this.drawn) this.out.write('\n');
    this.drawn = false;
  }
}

/** Polls the job's counters until it is completed or failed; `onUpdate` sees every poll. */
export async function followBatchJob(
  client: Client<typeof EmailService>,
  id: string,
  onUpdate: (job: BatchJob) => void,
  intervalMs = 500,
): Promise<BatchJob> {
  for (;;) {
    const job = await client.getBatchJob({ id });
    onUpdate(job);
    if (isFinished(job)) return job;
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
