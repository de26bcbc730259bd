import { ofAccount } from '../../lib/command-parts.js';
import { adminCommand } from '../../lib/define-command.js';
import { list, table } from '../../lib/format.js';
import { webhookState } from '../../lib/show.js';
import type { AdminClient } from '../../lib/rpc.js';

export default adminCommand({
  summary: "List an account's webhooks (never their secrets).",
  ...ofAccount((api: AdminClient, req) => api.listWebhooks(req)),
  show: (res) =>
    table(
      ['ID', 'URL', 'EVENTS', 'STATE', 'CREATED'],
      res.webhooks.map((w) => [w.id, w.url, list(w.events), webhookState(w), w.createdAt]),
    ),
});
