import { Flags } from '@oclif/core';
import { idOf } from '../../lib/command-parts.js';
import { adminCommand } from '../../lib/define-command.js';
import { showWebhook } from '../../lib/show.js';

export default adminCommand({
  summary: 'Give a webhook a new signing secret (shown this once); the old one keeps signing during the overlap.',
  description:
    'During the overlap every request is signed with both secrets: X-Mail-Signature with the new one, ' +
    'X-Mail-Signature-Previous with the old one, and webhook-signature carries one v1 signature per secret. ' +
    'Receivers switch to the new secret any time within the overlap; after it only the new one signs.',
  ...idOf('Webhook', 'wh', '', '--overlap 3600', '--overlap 0 --json'),
  flags: {
    overlap: Flags.integer({
      summary: 'Seconds the old secret keeps signing (default 86400: 24 h; 0 ends it now).',
      min: 0,
      max: 604_800,
    }),
  },
  call: (api, { args, flags }) => api.rotateWebhookSecret({ id: args.id, overlapSeconds: flags.overlap }),
  show: (webhook) =>
    `${showWebhook(webhook)}\n\nNew signing secret (shown once, it cannot be read again; keep it):\n  ${webhook.secret ?? ''}`,
});
