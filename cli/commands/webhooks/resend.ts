import { Args } from '@oclif/core';
import { AdminCommand } from '../../lib/base-command.js';

export default class WebhooksResend extends AdminCommand {
  static override summary = 'Send an event to its webhook again, with a fresh retry budget (e.g. one that was discarded).';
  static override examples = ['<%= config.bin %> <%= command.id %> whd_01JZ8Q4V6T3N2K5M7P9R0S1T2U01JZ8Q4V6T3N2K5M7P9R0S1T2U'];

  static override args = { id: Args.string({ description: 'Webhook delivery id (whd_..., the X-Mail-Delivery-Id).', required: true }) };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(WebhooksResend);
    const api = await this.adminClient(flags);
    const res = await api.resendWebhookDelivery({ id: args.id });
    await this.print(flags.json, res, () => this.log(`Queued ${res.id} (${res.eventType} of ${res.emailId}) again`));
  }
}
