import { Args, Flags } from '@oclif/core';
import { accountFlag, AdminCommand } from '../../lib/base-command.js';
import { showWebhook } from '../../lib/show.js';

const EVENTS = ['send', 'delivery', 'bounce', 'complaint', 'reject', 'open', 'click'] as const;

export default class WebhooksCreate extends AdminCommand {
  static override summary = 'Create a webhook. Its signing secret is shown this once: keep it.';
  static override description =
    'Each event is POSTed to the URL, signed with the secret: X-Mail-Signature is ' +
    'sha256=<hex HMAC-SHA256 of "<X-Mail-Timestamp>.<raw body>">. The URL must resolve to a public address ' +
    'unless the server runs with MAILER_WEBHOOK_ALLOW_PRIVATE=1.';

  static override examples = [
    '<%= config.bin %> <%= command.id %> https://hooks.acme.com/mail --account acc_01JZ8Q4V6T3N2K5M7P9R0S1T2U --event delivery --event bounce',
    '<%= config.bin %> <%= command.id %> https://hooks.acme.com/mail -a acc_01JZ8Q4V6T3N2K5M7P9R0S1T2U -e send -e delivery -e bounce -e complaint --json',
  ];

  static override args = { url: Args.string({ description: 'Where events are POSTed (https://...).', required: true }) };
  static override flags = {
    account: accountFlag,
    event: Flags.option({ options: EVENTS, char: 'e', summary: 'Event type to receive (repeatable).', multiple: true, multipleNonGreedy: true, required: true })(),
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(WebhooksCreate);
    const api = await this.adminClient(flags);
    const webhook = await api.createWebhook({ accountId: flags.account, url: args.url, events: flags.event });
    await this.print(flags.json, webhook, () => {
      this.log(showWebhook(webhook));
      this.log(`\nSigning secret (shown once, it cannot be read again; keep it):\n  ${webhook.secret ?? ''}`);
    });
  }
}
