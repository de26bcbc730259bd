import { Flags } from '@oclif/core';
import { idOf } from '../../lib/command-parts.js';
import { adminCommand } from '../../lib/define-command.js';
import { showAccount } from '../../lib/show.js';

export default adminCommand({
  summary: "Change an account's health status or daily quota.",
  description:
    '`paused` refuses its sends (403); `banned` refuses every request with its keys (401); `healthy` restores it.',
  ...idOf('Account', 'acc', '--status paused', '--daily-quota 5000 --json'),
  flags: {
    status: Flags.option({
      options: ['healthy', 'review', 'paused', 'banned'] as const,
      summary: 'New health status.',
      atLeastOne: ['status', 'daily-quota'],
    })(),
    'daily-quota': Flags.integer({
      summary: 'New daily sending quota (emails per UTC day).',
      min: 0,
      atLeastOne: ['status', 'daily-quota'],
    }),
  },
  call: (api, { args, flags }) =>
    api.updateAccount({ id: args.id, status: flags.status, dailyQuota: flags['daily-quota'] }),
  show: showAccount,
});
