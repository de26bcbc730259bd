import { Flags } from '@oclif/core';
import { accountFlag } from '../../lib/base-command.js';
import { adminCommand } from '../../lib/define-command.js';
import { showApiKey } from '../../lib/show.js';

export default adminCommand({
  summary: 'Create an API key. The key is shown this once: keep it.',
  examples: [
    '--account acc_01JZ8Q4V6T3N2K5M7P9R0S1T2U --name production --permission send_only',
    '-a acc_01JZ8Q4V6T3N2K5M7P9R0S1T2U --name billing --permission all --allowed-domain billing.acme.com --json',
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
  },
  call: (api, { flags }) =>
    api.createApiKey({
      accountId: flags.account,
      name: flags.name,
      permission: flags.permission,
      allowedDomains: flags['allowed-domain'] ?? [],
    }),
  show: (key) => `${showApiKey(key)}\n\nAPI key (shown once, it cannot be read again; keep it):\n  ${key.key ?? ''}`,
});
