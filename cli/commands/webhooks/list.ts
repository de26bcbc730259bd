import { accountFlag } from '../../lib/base-command.js';
import { adminCommand } from '../../lib/define-command.js';
import { list, table } from '../../lib/format.js';

export default adminCommand({
  summary: "List an account's webhooks (never their secrets).",
  examples: ['--account acc_01JZ8Q4V6T3N2K5M7P9R0S1T2U', '-a acc_01JZ8Q4V6T3N2K5M7P9R0S1T2U --json'],
  flags: { account: accountFlag },
  call: (api, { flags }) => api.listWebhooks({ accountId: flags.account }),
  show: (res) => table(['ID', 'URL', 'EVENTS', 'CREATED'], res.webhooks.map((w) => [w.id, w.url, list(w.events), w.createdAt])),
});
