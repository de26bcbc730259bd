import { accountFlag, AdminCommand } from '../../lib/base-command.js';
import { list, percent, table } from '../../lib/format.js';

export default class KeysList extends AdminCommand {
  static override summary = "List an account's API keys with their usage (never the keys themselves).";
  static override examples = ['<%= config.bin %> <%= command.id %> --account acc_01JZ8Q4V6T3N2K5M7P9R0S1T2U', '<%= config.bin %> <%= command.id %> -a acc_01JZ8Q4V6T3N2K5M7P9R0S1T2U --json'];

  static override flags = { account: accountFlag };

  async run(): Promise<void> {
    const { flags } = await this.parse(KeysList);
    const api = await this.adminClient(flags);
    const res = await api.listApiKeys({ accountId: flags.account });
    await this.print(flags.json, res, () =>
      this.log(
        table(
          ['ID', 'NAME', 'PERMISSION', 'ALLOWED DOMAINS', 'REQUESTS', 'SENT', 'ERRORS', 'CREATED'],
          res.apiKeys.map((k) => [
            k.id,
            k.name,
            k.permission,
            k.allowedDomains.length ? list(k.allowedDomains) : '(any)',
            String(k.usage?.requestCount ?? 0),
            String(k.usage?.emailSentCount ?? 0),
            percent(k.usage?.errorRate ?? 0),
            k.createdAt,
          ]),
        ),
      ),
    );
  }
}
