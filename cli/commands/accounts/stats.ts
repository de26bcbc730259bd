import { Flags } from '@oclif/core';
import { idOf } from '../../lib/command-parts.js';
import { adminCommand } from '../../lib/define-command.js';
import { table } from '../../lib/format.js';

const GROUPS = ['day', 'domain', 'recipient_domain', 'tag', 'stream'] as const;

/** `n (12.50 %)`: a count and its share of the accepted recipients. */
const share = (n: number, accepted: number) =>
  accepted > 0 ? `${n} (${((n / accepted) * 100).toFixed(2)} %)` : `${n}`;

export default adminCommand({
  summary: "An account's recipients by day, sender domain, recipient domain, tag or stream (GET /stats).",
  description:
    'Counts the recipients of the emails the account accepted in the range (whole UTC days; default the last 30, at ' +
    'most 90) by what became of them; by recipient domain, each with its recent bounce and deferral replies.',
  ...idOf(
    'Account',
    'acc',
    '',
    '--group-by recipient_domain',
    '--group-by tag --from 2026-11-01 --to 2026-11-30',
    '--group-by stream --json',
  ),
  flags: {
    'group-by': Flags.option({ options: GROUPS, summary: 'What to group by (default: day).' })(),
    from: Flags.string({ summary: 'First UTC day, ISO 8601 (2026-11-01); default: 30 days back.' }),
    to: Flags.string({ summary: 'Last UTC day, ISO 8601; default: today.' }),
  },
  call: (api, { args, flags }) =>
    api.getAccountGroupedStats({
      accountId: args.id,
      from: flags.from ?? '',
      to: flags.to ?? '',
      groupBy: flags['group-by'] ?? '',
    }),
  show: (res) => {
    const rows = table(
      [
        res.groupBy.toUpperCase(),
        'ACCEPTED',
        'DELIVERED',
        'BOUNCED',
        'DEFERRED',
        'COMPLAINED',
        'OPENED',
        'CLICKED',
        'UNSUBSCRIBED',
      ],
      res.stats.map((r) => [
        r.key,
        `${r.accepted}`,
        share(r.delivered, r.accepted),
        share(r.bounced, r.accepted),
        share(r.deferred, r.accepted),
        `${r.complained}`,
        `${r.opened}`,
        `${r.clicked}`,
        `${r.unsubscribed}`,
      ]),
    );
    const replies = res.stats
      .filter((r) => r.sampleReplies.length > 0)
      .map((r) => `${r.key}:\n${r.sampleReplies.map((reply) => `  ${reply}`).join('\n')}`);
    const range = `${res.from} to ${res.to} (UTC), by ${res.groupBy}`;
    return [range, rows, ...(replies.length > 0 ? ['Recent replies:', ...replies] : [])].join('\n');
  },
});
