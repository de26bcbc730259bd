import { adminCommand, idArg } from '../../lib/define-command.js';
import { table } from '../../lib/format.js';

export default adminCommand({
  summary: "An email's event timeline (send, delivery, bounce, complaint, ...): why it is in its state.",
  examples: ['em_01JZ8Q4V6T3N2K5M7P9R0S1T2U'],
  args: { id: idArg('Email id (em_...).') },
  call: (api, { args }) => api.getEmailDetail({ id: args.id }),
  show: (res, { args }) =>
    `${args.id}  ${res.email?.status ?? ''}  account ${res.accountId}\n` +
    table(['TIME', 'EVENT', 'DATA'], res.events.map((e) => [e.createdAt, e.type, JSON.stringify(e.data ?? {})])),
});
