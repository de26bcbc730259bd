import { Flags } from '@oclif/core';
import { EmailCommand } from '../../lib/base-command.js';
import { clip, list, pageLine, table } from '../../lib/format.js';

export default class ScheduledList extends EmailCommand {
  static override summary = 'List scheduled emails, newest first.';
  static override description = 'The status filter `scheduled` lists those still waiting (shown as `enqueued`).';
  static override examples = [
    '<%= config.bin %> <%= command.id %>',
    '<%= config.bin %> <%= command.id %> --status scheduled --limit 100',
    '<%= config.bin %> <%= command.id %> --status cancelled --page 2 --json',
  ];

  static override flags = {
    status: Flags.option({ options: ['scheduled', 'sent', 'cancelled'] as const, summary: 'Only scheduled emails in this state.' })(),
    page: Flags.integer({ summary: 'Page number, from 1.', default: 1, min: 1 }),
    limit: Flags.integer({ summary: 'Items per page (up to 100).', default: 20, min: 1, max: 100 }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(ScheduledList);
    const api = await this.emailClient(flags);
    const res = await api.listScheduledEmails({ page: flags.page, limit: flags.limit, status: flags.status ?? '' });
    await this.print(flags.json, res, () => {
      this.log(
        table(
          ['ID', 'STATUS', 'SCHEDULED AT', 'FROM', 'TO', 'SUBJECT', 'ATTEMPTS'],
          res.scheduledEmails.map((s) => [s.id, s.status, s.scheduledAt, s.from, clip(list(s.to), 40), clip(s.subject), String(s.attempts)]),
        ),
      );
      this.log(pageLine(flags.page, flags.limit, res.totalCount));
    });
  }
}
