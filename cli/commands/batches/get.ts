import { emailCommand, idArg } from '../../lib/define-command.js';
import { showBatchJob } from '../../lib/show.js';

export default emailCommand({
  summary: 'Show one batch job and its counters.',
  description: 'Its emails: `emails list --job-id <id>`.',
  examples: ['bat_01JZ8Q4V6T3N2K5M7P9R0S1T2U', 'bat_01JZ8Q4V6T3N2K5M7P9R0S1T2U --json'],
  args: { id: idArg('Batch job id (bat_...).') },
  call: (api, { args }) => api.getBatchJob({ id: args.id }),
  show: showBatchJob,
});
