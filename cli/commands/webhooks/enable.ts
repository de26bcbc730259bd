import type { AdminClient } from '../../lib/rpc.js';
import { byId } from '../../lib/command-parts.js';
import { adminCommand } from '../../lib/define-command.js';
import { showWebhook } from '../../lib/show.js';

export default adminCommand({
  summary: 'Enable a webhook that was disabled because its deliveries kept failing.',
  description:
    'Events that came while it was disabled were discarded (reason webhook_disabled); ' +
    'send them again with `webhooks resend-range`.',
  ...byId('Webhook', 'wh', (api: AdminClient, req) => api.enableWebhook(req)),
  show: (webhook) => `Enabled\n${showWebhook(webhook)}`,
});
