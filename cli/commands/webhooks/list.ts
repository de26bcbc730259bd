import { accountFlag, AdminCommand } from '../../lib/base-command.js';
import { list, table } from '../../lib/format.js';

export default class WebhooksList extends AdminCommand {
  static override summary = "List an account's webhooks (never their secrets).";
  static override examples = ['<%= config.bin %> <%= command.id %> --account acc_01JZ8Q4V6T3N2K5M7P9R0S1T2U', '<%= config.bin %> <%= command.id %> -a acc_01JZ8Q4V6T3N2K5M7P9R0S1T2U --json'];

  static override flags = { account: accountFlag };

  async run(): Promise<void> {
    const { flags } = await this.parse(WebhooksList);
    const api = await this.adminClient(flags);
    const res = await api.listWebhooks({ accountId: flags.account });
    await this.print(flags.json, res, () =>
      this.log(table(['ID', 'URL', 'EVENTS', 'CREATED'], res.webhooks.map((w) => [w.id, w.url, list(w.events), w.createdAt]))),
    );
  }
}
