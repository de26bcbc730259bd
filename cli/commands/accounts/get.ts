import { Args } from '@oclif/core';
import { AdminCommand } from '../../lib/base-command.js';
import { showAccount } from '../../lib/show.js';

export default class AccountsGet extends AdminCommand {
  static override summary = "Show an account with today's sends and its bounce and complaint rates.";
  static override examples = ['<%= config.bin %> <%= command.id %> acc_01JZ8Q4V6T3N2K5M7P9R0S1T2U', '<%= config.bin %> <%= command.id %> acc_01JZ8Q4V6T3N2K5M7P9R0S1T2U --json'];

  static override args = { id: Args.string({ description: 'Account id (acc_...).', required: true }) };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(AccountsGet);
    const api = await this.adminClient(flags);
    const account = await api.getAccount({ id: args.id });
    await this.print(flags.json, account, () => this.log(showAccount(account)));
  }
}
