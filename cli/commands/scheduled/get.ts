import { Args } from '@oclif/core';
import { EmailCommand } from '../../lib/base-command.js';
import { showScheduled } from '../../lib/show.js';

export default class ScheduledGet extends EmailCommand {
  static override summary = 'Show one scheduled email.';
  static override description = 'Once it has fired, `emails list --job-id <id>` finds the email it created.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> sch_01JZ8Q4V6T3N2K5M7P9R0S1T2U',
    '<%= config.bin %> <%= command.id %> sch_01JZ8Q4V6T3N2K5M7P9R0S1T2U --json',
  ];

  static override args = { id: Args.string({ description: 'Scheduled email id (sch_...).', required: true }) };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(ScheduledGet);
    const api = await this.emailClient(flags);
    const s = await api.getScheduledEmail({ id: args.id });
    await this.print(flags.json, s, () => this.log(showScheduled(s)));
  }
}
