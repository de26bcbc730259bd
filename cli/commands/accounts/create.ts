import { Args } from '@oclif/core';
import { AdminCommand } from '../../lib/base-command.js';
import { showAccount } from '../../lib/show.js';

export default class AccountsCreate extends AdminCommand {
  static override summary = 'Create an account (healthy, daily quota 100 until its first domain is verified).';
  static override description = 'Next: `domains add` a sender domain and `keys create` an API key for it.';
  static override examples = ['<%= config.bin %> <%= command.id %> "Acme Corp"', '<%= config.bin %> <%= command.id %> acme --json'];

  static override args = { name: Args.string({ description: 'Account name.', required: true }) };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(AccountsCreate);
    const api = await this.adminClient(flags);
    const account = await api.createAccount({ name: args.name });
    await this.print(flags.json, account, () => this.log(showAccount(account)));
  }
}
