import { byId } from '../../lib/command-parts.js';
import { emailCommand } from '../../lib/define-command.js';
import type { EmailClient } from '../../lib/rpc.js';
import { showScheduled } from '../../lib/show.js';

export default emailCommand({
  summary: 'Show one scheduled email.',
  description: 'Once it has fired, `emails list --job-id <id>` finds the email it created.',
  ...byId('Scheduled email', 'sch', (api: EmailClient, req) => api.getScheduledEmail(req), '', '--json'),
  show: showScheduled,
});
