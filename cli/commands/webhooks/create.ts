import { Args, Flags } from '@oclif/core';
import { accountFlag } from '../../lib/base-command.js';
import { adminCommand } from '../../lib/define-command.js';
import { showWebhook } from '../../lib/show.js';

const EVENTS = ['send', 'delivery', 'bounce', 'complaint', 'reject', 'open', 'click'] as const;

export default adminCommand({
  summary: 'Create a webhook. Its signing secret is shown this once: keep it.',
  description:
    'Each event is POSTed to the URL, signed with the secret: X-Mail-Signature is ' +
    'sha256=<hex HMAC-SHA256 of "<X-Mail-Timestamp>.<raw body>">; the Standard Webhooks headers (webhook-id, ' +
    'webhook-timestamp, webhook-signature) come too, for any Standard Webhooks library given the same secret. ' +
    'The URL must resolve to a public address ' +
    'unless the server runs with MAILER_WEBHOOK_ALLOW_PRIVATE=1.',
  examples: [
    'https://hooks.acme.com/mail --account acc_01JZ8Q4V6T3N2K5M7P9R0S1T2U --event delivery --event bounce',
    'https://hooks.acme.com/mail -a acc_01JZ8Q4V6T3N2K5M7P9R0S1T2U -e send -e delivery -e bounce -e complaint --json',
  ],
  args: { url: Args.string({ description: 'Where events are POSTed (https://...).', required: true }) },
  flags: {
    account: accountFlag,
    event: Flags.option({
      options: EVENTS,
      char: 'e',
      summary: 'Event type to receive (repeatable).',
      multiple: true,
      multipleNonGreedy: true,
      required: true,
    })(),
  },
  call: (api, { args, flags }) => api.createWebhook({ accountId: flags.account, url: args.url, events: flags.event }),
  show: (webhook) =>
    `${showWebhook(webhook)}\n\nSigning secret (shown once, it cannot be read again; keep it):\n  ${webhook.secret ?? ''}`,
});
