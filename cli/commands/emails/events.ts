import { Args } from '@oclif/core';
import { AdminCommand } from '../../lib/base-command.js';
import { table } from '../../lib/format.js';

export default class EmailsEvents extends AdminCommand {
  static override summary = "An email's event timeline (send, delivery, bounce, complaint, ...): why it is in its state.";
  static override examples = ['<%= config.bin %> <%= command.id %> em_01JZ8Q4V6T3N2K5M7P9R0S1T2U'];

  static override args = { id: Args.string({ description: 'Email id (em_...).', required: true }) };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(EmailsEvents);
    const api = await this.adminClient(flags);
    const res = await api.getEmailDetail({ id: args.id });
    await this.print(flags.json, res, () => {
      this.log(`${args.id}  ${res.email?.status ?? ''}  account ${res.accountId}`);
      this.log(table(['TIME', 'EVENT', 'DATA'], res.events.map((e) => [e.createdAt, e.type, JSON.stringify(e.data ?? {})])));
    });
  }
}
