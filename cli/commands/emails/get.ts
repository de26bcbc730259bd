import { emailCommand, idArg } from '../../lib/define-command.js';
import { showEmail } from '../../lib/show.js';

export default emailCommand({
  summary: 'Show one email: its status, message id, addresses, content and attachments.',
  examples: ['em_01JZ8Q4V6T3N2K5M7P9R0S1T2U', 'em_01JZ8Q4V6T3N2K5M7P9R0S1T2U --json'],
  args: { id: idArg('Email id (em_...).') },
  call: (api, { args }) => api.getEmail({ id: args.id }),
  show: showEmail,
});
