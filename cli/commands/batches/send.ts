import { Flags } from '@oclif/core';
import { EmailCommand } from '../../lib/base-command.js';
import { readBatchFile } from '../../lib/batch-file.js';
import { commandExamples } from '../../lib/define-command.js';
import { idempotencyHeaders } from '../../lib/message-input.js';
import { followBatchJob, ProgressBar } from '../../lib/progress.js';
import { showBatchJob } from '../../lib/show.js';

export default class BatchesSend extends EmailCommand {
  static override summary = 'Send up to 100 emails as one batch job, and follow it until it finishes.';
  static override description = [
    'The file is JSON or CSV.',
    '',
    'JSON: an array of emails with the API\'s field names, or {"emails": [...]} (the body of POST /emails/batch). For example:',
    '[{"from":"a@example.com","to":["b@example.net"],"subject":"Hi","text":"Hi"}]',
    '',
    'CSV (extension .csv): a header row, then one email per row. Columns: from, to, cc, bcc, reply_to (several ' +
      'addresses separated by ";"), subject, html, text, html_file, text_file, attachments (files separated by ";", ' +
      'relative to the CSV file), stream, topic, header:<Name> and tag:<name>. For example:',
    'from,to,subject,text,tag:campaign',
    'hello@example.com,a@example.net;b@example.net,Hi,Hello there,spring',
    '',
    'A mail merge names a stored template instead of subject and bodies: columns template (id or alias), ' +
      'template_version, locale, variables (a JSON object) and var:<name> (one per variable; dotted names nest). ' +
      'For example:',
    'from,to,template,var:name,var:order.number',
    'hello@example.com,ann@example.net,order-shipped,Ann,A-1001',
    '',
    "A progress bar then follows the job's counters (on stderr) until it is completed or failed, and the finished " +
      'job is printed (as JSON with --json). With --no-wait the accepted job is printed at once instead.',
  ].join('\n');

  static override examples = commandExamples([
    '--file newsletter.json',
    '--file recipients.csv --json',
    '--file recipients.csv --no-wait --idempotency-key spring-2026',
  ]);

  static override flags = {
    file: Flags.string({ char: 'F', summary: 'JSON or CSV file of up to 100 emails.', required: true }),
    wait: Flags.boolean({
      summary: 'Follow the job until it finishes (--no-wait: just submit it).',
      default: true,
      allowNo: true,
    }),
    'idempotency-key': Flags.string({
      summary: 'Idempotency-Key: the same key and file within 24 hours sends only once.',
    }),
    interval: Flags.integer({ summary: 'Milliseconds between progress polls.', default: 500, min: 100, hidden: true }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(BatchesSend);
    const emails = await readBatchFile(flags.file);
    const client = await this.emailClient(flags);
    const accepted = await client.sendBatch({ emails }, { headers: idempotencyHeaders(flags) });
    if (!flags.wait) {
      await this.print(flags.json, accepted, () =>
        this.log(`Batch job ${accepted.jobId} accepted: ${accepted.totalCount} emails (${accepted.status}).`),
      );
      return;
    }
    const showProgress = !flags.json || process.stderr.isTTY;
    if (showProgress)
      this.note(
        `Batch job ${accepted.jobId} accepted: ${accepted.totalCount} emails. Following it (Ctrl-C stops watching, not the job).`,
      );
    const bar = new ProgressBar();
    const job = await followBatchJob(client, accepted.jobId, (j) => showProgress && bar.update(j), flags.interval);
    bar.done();
    await this.print(flags.json, job, () => this.log(showBatchJob(job)));
  }
}
