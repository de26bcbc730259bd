import { adminCommand, idArg } from '../../lib/define-command.js';

export default adminCommand({
  summary: 'Remove an address from its account\'s suppression list: mail to it is sent again.',
  examples: ['sup_01JZ8Q4V6T3N2K5M7P9R0S1T2U'],
  args: { id: idArg('Suppression id (sup_...).') },
  call: (api, { args }) => api.deleteSuppression({ id: args.id }),
  show: (res, { args }) => res.message || `Removed ${args.id}`,
});
