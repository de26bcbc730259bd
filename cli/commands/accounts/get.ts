import { byId } from '../../lib/command-parts.js';
import { adminCommand } from '../../lib/define-command.js';
import type { AdminClient } from '../../lib/rpc.js';
import { showAccount } from '../../lib/show.js';

export default adminCommand({
  summary: "Show an account with today's sends and its bounce and complaint rates.",
  ...byId('Account', 'acc', (api: AdminClient, req) => api.getAccount(req), '', '--json'),
  show: showAccount,
});
