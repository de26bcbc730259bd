import { byId, confirmed } from '../../lib/command-parts.js';
import { adminCommand } from '../../lib/define-command.js';
import type { AdminClient } from '../../lib/rpc.js';

export default adminCommand({
  summary:
    'Remove a suppression by its id (from `accounts suppressions`): mail to the address is sent again (admin token).',
  ...byId('Suppression', 'sup', (api: AdminClient, req) => api.deleteSuppression(req)),
  show: confirmed('Removed'),
});
