import { accountFlag } from '../../lib/base-command.js';
import { adminCommand } from '../../lib/define-command.js';
import { table, yesNo } from '../../lib/format.js';

export default adminCommand({
  summary: "List an account's sender domains.",
  examples: ['--account acc_01JZ8Q4V6T3N2K5M7P9R0S1T2U', '-a acc_01JZ8Q4V6T3N2K5M7P9R0S1T2U --json'],
  flags: { account: accountFlag },
  call: (api, { flags }) => api.listDomains({ accountId: flags.account }),
  show: (res) =>
    table(
      ['ID', 'NAME', 'VERIFIED', 'OPEN TRACKING', 'CLICK TRACKING', 'CREATED'],
      res.domains.map((d) => [
        d.id,
        d.name,
        yesNo(d.verified),
        yesNo(d.openTracking),
        yesNo(d.clickTracking),
        d.createdAt,
      ]),
    ),
});
