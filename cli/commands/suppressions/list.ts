import { accountFlag } from '../../lib/base-command.js';
import { adminCommand } from '../../lib/define-command.js';
import { table } from '../../lib/format.js';

export default adminCommand({
  summary: 'Addresses an account no longer sends to (hard bounces and complaints).',
  examples: ['-a acc_01JZ8Q4V6T3N2K5M7P9R0S1T2U'],
  flags: { account: accountFlag },
  call: (api, { flags }) => api.listSuppressions({ accountId: flags.account }),
  show: (res) => table(['ID', 'ADDRESS', 'REASON', 'EMAIL', 'SINCE'], res.suppressions.map((s) => [s.id, s.emailAddress, s.reason, s.emailId, s.createdAt])),
});
