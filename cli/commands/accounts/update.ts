import { Flags } from '@oclif/core';
import { adminCommand, idArg } from '../../lib/define-command.js';
import { showAccount } from '../../lib/show.js';

export default adminCommand({
  summary: "Change an account's health status or daily quota.",
  description: '`paused` refuses its sends (403); `banned` refuses every request with its keys (401); `healthy` restores it.',
  examples: ['acc_01JZ8Q4V6T3N2K5M7P9R0S1T2U --status paused', 'acc_01JZ8Q4V6T3N2K5M7P9R0S1T2U --daily-quota 5000 --json'],
  args: { id: idArg('Account id (acc_...).') },
  flags: {
    status: Flags.option({ options: ['healthy', 'review', 'paused', 'banned'] as const, summary: 'New health status.', atLeastOne: ['status', 'daily-quota'] })(),
    'daily-quota': Flags.integer({ summary: 'New daily sending quota (emails per UTC day).', min: 0, atLeastOne: ['status', 'daily-quota'] }),
  },
  call: (api, { args, flags }) => api.updateAccount({ id: args.id, status: flags.status, dailyQuota: flags['daily-quota'] }),
  show: showAccount,
});
