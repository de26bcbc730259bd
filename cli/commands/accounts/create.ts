import { Args } from '@oclif/core';
import { adminCommand } from '../../lib/define-command.js';
import { showAccount } from '../../lib/show.js';

export default adminCommand({
  summary: 'Create an account (healthy, daily quota 100 until its first domain is verified).',
  description: 'Next: `domains add` a sender domain and `keys create` an API key for it.',
  examples: ['"Acme Corp"', 'acme --json'],
  args: { name: Args.string({ description: 'Account name.', required: true }) },
  call: (api, { args }) => api.createAccount({ name: args.name }),
  show: showAccount,
});
