import { adminCommand, idArg } from '../../lib/define-command.js';

export default adminCommand({
  summary: 'Delete a webhook: no more events are sent to it.',
  examples: ['wh_01JZ8Q4V6T3N2K5M7P9R0S1T2U'],
  args: { id: idArg('Webhook id (wh_...).') },
  call: (api, { args }) => api.deleteWebhook({ id: args.id }),
  show: (res, { args }) => res.message || `Deleted ${args.id}`,
});
