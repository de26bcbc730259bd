import { byId, confirmed } from '../../lib/command-parts.js';
import { adminCommand } from '../../lib/define-command.js';
import type { AdminClient } from '../../lib/rpc.js';

export default adminCommand({
  summary: "Remove an address from its account's suppression list: mail to it is sent again.",
  ...byId('Suppression', 'sup', (api: AdminClient, req) => api.deleteSuppression(req)),
  show: confirmed('Removed'),
});
