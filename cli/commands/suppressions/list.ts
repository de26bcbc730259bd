import { ofAccount, sampleId } from '../../lib/command-parts.js';
import { adminCommand } from '../../lib/define-command.js';
import { table } from '../../lib/format.js';
import type { AdminClient } from '../../lib/rpc.js';

export default adminCommand({
  summary: 'Addresses an account no longer sends to (hard bounces and complaints).',
  ...ofAccount((api: AdminClient, req) => api.listSuppressions(req), [`-a ${sampleId('acc')}`]),
  show: (res) =>
    table(
      ['ID', 'ADDRESS', 'REASON', 'EMAIL', 'SINCE'],
      res.suppressions.map((s) => [s.id, s.emailAddress, s.reason, s.emailId, s.createdAt]),
    ),
});
