import { emailCommand, idArg } from '../../lib/define-command.js';

export default emailCommand({
  summary: 'Cancel a scheduled email that has not been sent yet.',
  description: 'Cancelling one already cancelled succeeds again; one already sent is refused (exit 1).',
  examples: ['sch_01JZ8Q4V6T3N2K5M7P9R0S1T2U'],
  args: { id: idArg('Scheduled email id (sch_...).') },
  call: (api, { args }) => api.cancelScheduledEmail({ id: args.id }),
  show: (res, { args }) => res.message || `Cancelled ${args.id}`,
});
