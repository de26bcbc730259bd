import { accountFlag } from '../../lib/base-command.js';
import { adminCommand } from '../../lib/define-command.js';
import { list, percent, table } from '../../lib/format.js';

export default adminCommand({
  summary: "List an account's API keys with their usage (never the keys themselves).",
  examples: ['--account acc_01JZ8Q4V6T3N2K5M7P9R0S1T2U', '-a acc_01JZ8Q4V6T3N2K5M7P9R0S1T2U --json'],
  flags: { account: accountFlag },
  call: (api, { flags }) => api.listApiKeys({ accountId: flags.account }),
  show: (res) => table(
    ['ID', 'NAME', 'PERMISSION', 'ALLOWED DOMAINS', 'REQUESTS', 'SENT', 'ERRORS', 'CREATED'],
    res.apiKeys.map((k) => [
      k.id, k.name, k.permission, k.allowedDomains.length ? list(k.allowedDomains) : '(any)',
      String(k.usage?.requestCount ?? 0), String(k.usage?.emailSentCount ?? 0), percent(k.usage?.errorRate ?? 0), k.createdAt,
    ]),
  ),
});
