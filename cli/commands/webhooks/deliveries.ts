import { Args, Flags } from '@oclif/core';
import { AdminCommand } from '../../lib/base-command.js';
import { table } from '../../lib/format.js';

export default class WebhooksDeliveries extends AdminCommand {
  static override summary = 'Events sent to a webhook, newest first, with every attempt.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> wh_01JZ8Q4V6T3N2K5M7P9R0S1T2U',
    '<%= config.bin %> <%= command.id %> wh_01JZ8Q4V6T3N2K5M7P9R0S1T2U --status discarded --json',
  ];

  static override args = { id: Args.string({ description: 'Webhook id (wh_...).', required: true }) };
  static override flags = {
    status: Flags.option({ options: ['pending', 'succeeded', 'discarded'] as const, summary: 'Only deliveries in this status.' })(),
    limit: Flags.integer({ summary: 'How many (default 50, at most 100).', min: 1, max: 100 }),
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(WebhooksDeliveries);
    const api = await this.adminClient(flags);
    const res = await api.listWebhookDeliveries({ id: args.id, status: flags.status ?? '', limit: flags.limit ?? 0 });
    await this.print(flags.json, res, () =>
      this.log(table(['ID', 'EVENT', 'EMAIL', 'STATUS', 'ATTEMPTS', 'CREATED'], res.deliveries.map((d) => [
        d.id, d.eventType, d.emailId, d.status,
        d.attempts.map((a) => (a.statusCode === 0 ? a.error || 'no answer' : String(a.statusCode))).join(' → '), d.createdAt,
      ]))),
    );
  }
}
