import { adminCommand } from '../../lib/define-command.js';
import { table } from '../../lib/format.js';

export default adminCommand({
  summary: 'List accounts.',
  examples: ['', '--json'],
  call: (api) => api.listAccounts({}),
  show: (res) =>
    table(
      ['ID', 'NAME', 'STATUS', 'DAILY QUOTA', 'CREATED'],
      res.accounts.map((a) => [a.id, a.name, a.status, String(a.dailyQuota), a.createdAt]),
    ),
});
