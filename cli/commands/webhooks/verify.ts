import { byId } from '../../lib/command-parts.js';
import { adminCommand } from '../../lib/define-command.js';
import type { AdminClient } from '../../lib/rpc.js';

export default adminCommand({
  summary: 'Send the signed test request (X-Mail-Event: test) to a webhook and show what it answered.',
  ...byId('Webhook', 'wh', (api: AdminClient, req) => api.verifyWebhook(req)),
  show: (res) =>
    res.success
      ? `OK: the receiver answered HTTP ${res.statusCode}`
      : `Failed: ${res.statusCode === 0 ? 'no answer' : `HTTP ${res.statusCode}`}`,
  exitCode: (res) => (res.success ? 0 : 1),
});
