import { Args, Flags } from '@oclif/core';
import { AdminCommand } from '../../lib/base-command.js';
import { showAccount } from '../../lib/show.js';

export default class AccountsUpdate extends AdminCommand {
  static override summary = "Change an account's health status or daily quota.";
  static override description = '`paused` refuses its sends (403); `banned` refuses every request with its keys (401); `healthy` restores it.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> acc_01JZ8Q4V6T3N2K5M7P9R0S1T2U --status paused',
    '<%= config.bin %> <%= command.id %> acc_01JZ8Q4V6T3N2K5M7P9R0S1T2U --daily-quota 5000 --json',
  ];

  static override args = { id: Args.string({ description: 'Account id (acc_...).', required: true }) };
  static override flags = {
    status: Flags.option({ options: ['healthy', 'review', 'paused', 'banned'] as const, summary: 'New health status.', atLeastOne: ['status', 'daily-quota'] })(),
    'daily-quota': Flags.integer({ summary: 'New daily sending quota (emails per UTC day).', min: 0, atLeastOne: ['status', 'daily-quota'] }),
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(AccountsUpdate);
    const api = await this.adminClient(flags);
    const account = await api.updateAccount({ id: args.id, status: flags.status, dailyQuota: flags['daily-quota'] });
    await this.print(flags.json, account, () => this.log(showAccount(account)));
  }
}
