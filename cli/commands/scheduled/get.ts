import { emailCommand, idArg } from '../../lib/define-command.js';
import { showScheduled } from '../../lib/show.js';

export default emailCommand({
  summary: 'Show one scheduled email.',
  description: 'Once it has fired, `emails list --job-id <id>` finds the email it created.',
  examples: ['sch_01JZ8Q4V6T3N2K5M7P9R0S1T2U', 'sch_01JZ8Q4V6T3N2K5M7P9R0S1T2U --json'],
  args: { id: idArg('Scheduled email id (sch_...).') },
  call: (api, { args }) => api.getScheduledEmail({ id: args.id }),
  show: showScheduled,
});
