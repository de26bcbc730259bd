import { Args } from '@oclif/core';
import { EmailCommand } from '../../lib/base-command.js';
import { showEmail } from '../../lib/show.js';

export default class EmailsGet extends EmailCommand {
  static override summary = 'Show one email: its status, message id, addresses, content and attachments.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> em_01JZ8Q4V6T3N2K5M7P9R0S1T2U',
    '<%= config.bin %> <%= command.id %> em_01JZ8Q4V6T3N2K5M7P9R0S1T2U --json',
  ];

  static override args = { id: Args.string({ description: 'Email id (em_...).', required: true }) };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(EmailsGet);
    const api = await this.emailClient(flags);
    const email = await api.getEmail({ id: args.id });
    await this.print(flags.json, email, () => this.log(showEmail(email)));
  }
}
