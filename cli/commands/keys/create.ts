import { Flags } from '@oclif/core';
import { accountFlag } from '../../lib/base-command.js';
import { adminCommand } from '../../lib/define-command.js';
import { showApiKey } from '../../lib/show.js';

export default adminCommand({
  summary: 'Create an API key. The key is shown this once: keep it.',
  examples: [
    '--account acc_01JZ8Q4V6T3N2K5M7P9R0S1T2U --name production --permission send_only',
    '-a acc_01JZ8Q4V6T3N2K5M7P9R0S1T2U --name billing --permission all --allowed-domain billing.acme.com --json',
    '-a acc_01JZ8Q4V6T3N2K5M7P9R0S1T2U --name ci --permission send_only --rate-limit 5 --daily-quota 200 --expires-at 2026-12-31T00:00:00Z',
  ],
  flags: {
    account: accountFlag,
    name: Flags.string({ summary: 'Label of the key.', required: true }),
    permission: Flags.option({
      options: ['read_only', 'send_only', 'all'] as const,
      summary: 'What the key may do.',
      required: true,
    })(),
    'allowed-domain': Flags.string({
      summary: 'Sender domain the key may send from (repeatable; default: any verified domain).',
      multiple: true,
    }),
    'rate-limit': Flags.integer({
      summary: "The key's own requests per second, up to the service's MAILER_RATE_LIMIT (default: that limit).",
      min: 1,
    }),
    'daily-quota': Flags.integer({
      summary: "The key's own emails per UTC day, up to the account's daily quota (default: the account's alone).",
      min: 0,
    }),
    'expires-at': Flags.string({
      summary: 'When the key stops working, ISO 8601 with a zone, in the future (default: never).',
    }),
  },
  call: (api, { flags }) =>
    api.createApiKey({
      accountId: flags.account,
      name: flags.name,
      permission: flags.permission,
      allowedDomains: flags['allowed-domain'] ?? [],
      rateLimit: flags['rate-limit'],
      dailyQuota: flags['daily-quota'],
      expiresAt: flags['expires-at'],
    }),
  show: (key) => `${showApiKey(key)}\n\nAPI key (shown once, it cannot be read again; keep it):\n  ${key.key ?? ''}`,
});
