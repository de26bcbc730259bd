import { byId, confirmed } from '../../lib/command-parts.js';
import { adminCommand } from '../../lib/define-command.js';
import type { AdminClient } from '../../lib/rpc.js';

export default adminCommand({
  summary: 'Delete an API key: it fails with 401 from the next request on.',
  description: 'To rotate a key: create the new one, move your applications to it, then delete the old one.',
  ...byId('API key', 'key', (api: AdminClient, req) => api.deleteApiKey(req)),
  show: confirmed('Deleted'),
});
