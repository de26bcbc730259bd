import { accountFlag, AdminCommand } from '../../lib/base-command.js';
import { table, yesNo } from '../../lib/format.js';

export default class DomainsList extends AdminCommand {
  static override summary = "List an account's sender domains.";
  static override examples = ['<%= config.bin %> <%= command.id %> --account acc_01JZ8Q4V6T3N2K5M7P9R0S1T2U', '<%= config.bin %> <%= command.id %> -a acc_01JZ8Q4V6T3N2K5M7P9R0S1T2U --json'];

  static override flags = { account: accountFlag };

  async run(): Promise<void> {
    const { flags } = await this.parse(DomainsList);
    const api = await this.adminClient(flags);
    const res = await api.listDomains({ accountId: flags.account });
    await this.print(flags.json, res, () =>
      this.log(
        table(
          ['ID', 'NAME', 'VERIFIED', 'OPEN TRACKING', 'CLICK TRACKING', 'CREATED'],
          res.domains.map((d) => [d.id, d.name, yesNo(d.verified), yesNo(d.openTracking), yesNo(d.clickTracking), d.createdAt]),
        ),
      ),
    );
  }
}
