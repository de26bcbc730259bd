import { Flags } from '@oclif/core';
import { emailCommand } from '../../lib/define-command.js';
import { pageLine, table } from '../../lib/format.js';
import { topicOf } from '../../lib/suppression-show.js';

export default emailCommand({
  summary: "List the account's suppressions, newest first, by address, reason, scope or topic.",
  description: 'Needs an API key with permission all or read_only.',
  examples: ['', '--email @example.org', '--scope broadcast --topic news --json', '--reason bounce --page 2'],
  flags: {
    email: Flags.string({ summary: 'A whole address (exact match) or part of one (contains).' }),
    reason: Flags.option({
      options: ['bounce', 'complaint', 'unsubscribe', 'manual'] as const,
      summary: 'Only suppressions for this reason.',
    })(),
    scope: Flags.option({ options: ['all', 'broadcast'] as const, summary: 'Only suppressions of this scope.' })(),
    topic: Flags.string({ summary: 'Only suppressions for this broadcast topic.' }),
    page: Flags.integer({ summary: 'Page number, from 1.', default: 1, min: 1 }),
    'page-size': Flags.integer({ summary: 'Suppressions per page (up to 100).', default: 20, min: 1, max: 100 }),
  },
  call: (api, { flags }) =>
    api.searchSuppressions({
      email: flags.email ?? '',
      reason: flags.reason ?? '',
      scope: flags.scope ?? '',
      topic: flags.topic ?? '',
      page: flags.page,
      pageSize: flags['page-size'],
    }),
  show: (res, { flags }) =>
    `${table(
      ['EMAIL', 'REASON', 'SCOPE', 'TOPIC', 'SINCE'],
      res.suppressions.map((s) => [s.email, s.reason, s.scope, topicOf(s.topic), s.createdAt]),
    )}\n${pageLine(flags.page, flags['page-size'], res.total)}`,
});
