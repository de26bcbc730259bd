import { Args } from '@oclif/core';
import { EmailCommand } from '../../lib/base-command.js';

export default class ScheduledCancel extends EmailCommand {
  static override summary = 'Cancel a scheduled email that has not been sent yet.';
  static override description = 'Cancelling one already cancelled succeeds again; one already sent is refused (exit 1).';
  static override examples = ['<%= config.bin %> <%= command.id %> sch_01JZ8Q4V6T3N2K5M7P9R0S1T2U'];

  static override args = { id: Args.string({ description: 'Scheduled email id (sch_...).', required: true }) };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(ScheduledCancel);
    const api = await this.emailClient(flags);
    const res = await api.cancelScheduledEmail({ id: args.id });
    await this.print(flags.json, res, () => this.log(res.message || `Cancelled ${args.id}`));
  }
}
