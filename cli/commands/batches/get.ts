import { byId } from '../../lib/command-parts.js';
import { emailCommand } from '../../lib/define-command.js';
import type { EmailClient } from '../../lib/rpc.js';
import { showBatchJob } from '../../lib/show.js';

export default emailCommand({
  summary: 'Show one batch job and its counters.',
  description: 'Its emails: `emails list --job-id <id>`.',
  ...byId('Batch job', 'bat', (api: EmailClient, req) => api.getBatchJob(req), '', '--json'),
  show: showBatchJob,
});
