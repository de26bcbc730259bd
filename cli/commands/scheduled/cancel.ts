import { byId, confirmed } from '../../lib/command-parts.js';
import { emailCommand } from '../../lib/define-command.js';
import type { EmailClient } from '../../lib/rpc.js';

export default emailCommand({
  summary: 'Cancel a scheduled email that has not been sent yet.',
  description: 'Cancelling one already cancelled succeeds again; one already sent is refused (exit 1).',
  ...byId('Scheduled email', 'sch', (api: EmailClient, req) => api.cancelScheduledEmail(req)),
  show: confirmed('Cancelled'),
});
