import { ofAccount } from '../../lib/command-parts.js';
import { adminCommand } from '../../lib/define-command.js';
import { list, percent, table } from '../../lib/format.js';
import type { AdminClient } from '../../lib/rpc.js';

export default adminCommand({
  summary: "List an account's API keys with their usage (never the keys themselves).",
  ...ofAccount((api: AdminClient, req) => api.listApiKeys(req)),
  show: (res) =>
    table(
      ['ID', 'NAME', 'PERMISSION', 'ALLOWED DOMAINS', 'REQUESTS', 'SENT', 'ERRORS', 'CREATED'],
      res.apiKeys.map((k) => [
        k.id,
        k.name,
        k.permission,
        k.allowedDomains.length ? list(k.allowedDomains) : '(any)',
        String(k.usage?.requestCount ?? 0),
        String(k.usage?.emailSentCount ?? 0),
        percent(k.usage?.errorRate ?? 0),
        k.createdAt,
      ]),
    ),
});
