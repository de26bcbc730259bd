import { Args } from '@oclif/core';
import { accountFlag } from '../../lib/base-command.js';
import { adminCommand } from '../../lib/define-command.js';
import { showDomain } from '../../lib/show.js';

export default adminCommand({
  summary: 'Add a sender domain to an account; prints the DNS records that verify it.',
  examples: [
    'mail.acme.com --account acc_01JZ8Q4V6T3N2K5M7P9R0S1T2U',
    'mail.acme.com -a acc_01JZ8Q4V6T3N2K5M7P9R0S1T2U --json',
  ],
  args: { name: Args.string({ description: 'Domain name.', required: true }) },
  flags: { account: accountFlag },
  call: (api, { args, flags }) => api.createDomain({ accountId: flags.account, name: args.name }),
  show: (domain, { bin }) =>
    `${showDomain(domain)}\n\nPublish the records above, then: ${bin} domains verify ${domain.id}`,
});
