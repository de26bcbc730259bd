import { byId, confirmed } from '../../lib/command-parts.js';
import { adminCommand } from '../../lib/define-command.js';
import type { AdminClient } from '../../lib/rpc.js';

export default adminCommand({
  summary: 'Delete a webhook: no more events are sent to it.',
  ...byId('Webhook', 'wh', (api: AdminClient, req) => api.deleteWebhook(req)),
  show: confirmed('Deleted'),
});
