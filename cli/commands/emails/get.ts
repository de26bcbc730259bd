import { byId } from '../../lib/command-parts.js';
import { emailCommand } from '../../lib/define-command.js';
import type { EmailClient } from '../../lib/rpc.js';
import { showEmail } from '../../lib/show.js';

export default emailCommand({
  summary: 'Show one email: its status, message id, addresses, content and attachments.',
  ...byId('Email', 'em', (api: EmailClient, req) => api.getEmail(req), '', '--json'),
  show: showEmail,
});
