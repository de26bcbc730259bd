import { Flags } from '@oclif/core';
import { idOf } from '../../lib/command-parts.js';
import { adminCommand } from '../../lib/define-command.js';
import { showAccount } from '../../lib/show.js';

/** Any one of the changes makes a command. */
const ONE_OF = ['status', 'daily-quota', 'brand-name', 'brand-logo-url'];

export default adminCommand({
  summary: "Change an account's health status, daily quota or unsubscribe page branding.",
  description:
    '`paused` refuses its sends (403); `banned` refuses every request with its keys (401); `healthy` restores it. ' +
    'The brand name and logo are what its unsubscribe page shows (docs/unsubscribe.md); "" removes one.',
  ...idOf('Account', 'acc', '--status paused', '--daily-quota 5000 --json'),
  flags: {
    status: Flags.option({
      options: ['healthy', 'review', 'paused', 'banned'] as const,
      summary: 'New health status.',
      atLeastOne: ONE_OF,
    })(),
    'daily-quota': Flags.integer({
      summary: 'New daily sending quota (emails per UTC day).',
      min: 0,
      atLeastOne: ONE_OF,
    }),
    'brand-name': Flags.string({
      summary: 'The name the unsubscribe page shows instead of the account\'s (up to 100 characters; "" removes it).',
      atLeastOne: ONE_OF,
    }),
    'brand-logo-url': Flags.string({
      summary: 'An https:// URL of the logo the unsubscribe page shows ("" removes it).',
      atLeastOne: ONE_OF,
    }),
  },
  call: (api, { args, flags }) =>
    api.updateAccount({
      id: args.id,
      status: flags.status,
      dailyQuota: flags['daily-quota'],
      brandName: flags['brand-name'],
      brandLogoUrl: flags['brand-logo-url'],
    }),
  show: showAccount,
});
