import { accountFlag, AdminCommand } from '../../lib/base-command.js';
import { table } from '../../lib/format.js';

export default class SuppressionsList extends AdminCommand {
  static override summary = 'Addresses an account no longer sends to (hard bounces and complaints).';
  static override examples = ['<%= config.bin %> <%= command.id %> -a acc_01JZ8Q4V6T3N2K5M7P9R0S1T2U'];

  static override flags = { account: accountFlag };

  async run(): Promise<void> {
    const { flags } = await this.parse(SuppressionsList);
    const api = await this.adminClient(flags);
    const res = await api.listSuppressions({ accountId: flags.account });
    await this.print(flags.json, res, () =>
      this.log(table(['ID', 'ADDRESS', 'REASON', 'EMAIL', 'SINCE'], res.suppressions.map((s) => [s.id, s.emailAddress, s.reason, s.emailId, s.createdAt]))),
    );
  }
}
