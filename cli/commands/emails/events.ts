import { byId } from '../../lib/command-parts.js';
import { adminCommand } from '../../lib/define-command.js';
import { table } from '../../lib/format.js';
import type { AdminClient } from '../../lib/rpc.js';

export default adminCommand({
  summary: "An email's event timeline (send, delivery, bounce, complaint, ...): why it is in its state.",
  ...byId('Email', 'em', (api: AdminClient, req) => api.getEmailDetail(req)),
  show: (res, { args }) =>
    `${args.id}  ${res.email?.status ?? ''}  account ${res.accountId}\n` +
    table(
      ['TIME', 'EVENT', 'DATA'],
      res.events.map((e) => [e.createdAt, e.type, JSON.stringify(e.data ?? {})]),
    ),
});
