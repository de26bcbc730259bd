import { Args } from '@oclif/core';
import { AdminCommand } from '../../lib/base-command.js';

export default class WebhooksDelete extends AdminCommand {
  static override summary = 'Delete a webhook: no more events are sent to it.';
  static override examples = ['<%= config.bin %> <%= command.id %> wh_01JZ8Q4V6T3N2K5M7P9R0S1T2U'];

  static override args = { id: Args.string({ description: 'Webhook id (wh_...).', required: true }) };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(WebhooksDelete);
    const api = await this.adminClient(flags);
    const res = await api.deleteWebhook({ id: args.id });
    await this.print(flags.json, res, () => this.log(res.message || `Deleted ${args.id}`));
  }
}
