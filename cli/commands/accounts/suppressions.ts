import { ofAccount, sampleId } from '../../lib/command-parts.js';
import { adminCommand } from '../../lib/define-command.js';
import { table } from '../../lib/format.js';
import type { AdminClient } from '../../lib/rpc.js';
import { topicOf } from '../../lib/suppression-show.js';

export default adminCommand({
  summary: "An account's suppressed addresses, newest first (at most 1000), with their ids (admin token).",
  description:
    "The operator's view: remove one with `accounts unsuppress <id>`. An account manages its own list with its API key: `suppressions list|add|delete|import|export`.",
  ...ofAccount((api: AdminClient, req) => api.listSuppressions(req), [`-a ${sampleId('acc')}`]),
  show: (res) =>
    table(
      ['ID', 'ADDRESS', 'REASON', 'SCOPE', 'TOPIC', 'EMAIL', 'SINCE'],
      res.suppressions.map((s) => [
        s.id,
        s.emailAddress,
        s.reason,
        s.scope,
        topicOf(s.topic),
        s.emailId ?? '',
        s.createdAt,
      ]),
    ),
});
