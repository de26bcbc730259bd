import { Args } from '@oclif/core';
import { AdminCommand } from '../../lib/base-command.js';

export default class WebhooksVerify extends AdminCommand {
  static override summary = 'Send the signed test request (X-Mail-Event: test) to a webhook and show what it answered.';
  static override examples = ['<%= config.bin %> <%= command.id %> wh_01JZ8Q4V6T3N2K5M7P9R0S1T2U'];

  static override args = { id: Args.string({ description: 'Webhook id (wh_...).', required: true }) };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(WebhooksVerify);
    const api = await this.adminClient(flags);
    const res = await api.verifyWebhook({ id: args.id });
    await this.print(flags.json, res, () =>
      this.log(res.success ? `OK: the receiver answered HTTP ${res.statusCode}` : `Failed: ${res.statusCode === 0 ? 'no answer' : `HTTP ${res.statusCode}`}`));
    if (!res.success) this.exit(1);
  }
}
