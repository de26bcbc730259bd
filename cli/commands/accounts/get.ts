import { adminCommand, idArg } from '../../lib/define-command.js';
import { showAccount } from '../../lib/show.js';

export default adminCommand({
  summary: "Show an account with today's sends and its bounce and complaint rates.",
  examples: ['acc_01JZ8Q4V6T3N2K5M7P9R0S1T2U', 'acc_01JZ8Q4V6T3N2K5M7P9R0S1T2U --json'],
  args: { id: idArg('Account id (acc_...).') },
  call: (api, { args }) => api.getAccount({ id: args.id }),
  show: showAccount,
});
