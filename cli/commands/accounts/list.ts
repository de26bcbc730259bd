import { AdminCommand } from '../../lib/base-command.js';
import { table } from '../../lib/format.js';

export default class AccountsList extends AdminCommand {
  static override summary = 'List accounts.';
  static override examples = ['<%= config.bin %> <%= command.id %>', '<%= config.bin %> <%= command.id %> --json'];

  async run(): Promise<void> {
    const { flags } = await this.parse(AccountsList);
    const api = await this.adminClient(flags);
    const res = await api.listAccounts({});
    await this.print(flags.json, res, () =>
      this.log(table(['ID', 'NAME', 'STATUS', 'DAILY QUOTA', 'CREATED'], res.accounts.map((a) => [a.id, a.name, a.status, String(a.dailyQuota), a.createdAt]))),
    );
  }
}
