import { Args, Flags } from '@oclif/core';
import { emailCommand } from '../../lib/define-command.js';

export default emailCommand({
  summary: "Remove an address's suppressions: all of them, or the one of --scope (and --topic).",
  description: 'Mail to the address is sent again. Needs an API key with permission all.',
  examples: ['user@example.org', 'user@example.org --scope broadcast --topic news --json'],
  args: { email: Args.string({ description: 'The suppressed address.', required: true }) },
  flags: {
    scope: Flags.option({
      options: ['all', 'broadcast'] as const,
      summary: 'Only the suppression of this scope (default: every one of the address).',
    })(),
    topic: Flags.string({ summary: 'With --scope broadcast: the suppression for this topic.' }),
  },
  call: (api, { args, flags }) =>
    api.removeSuppression({ email: args.email, scope: flags.scope ?? '', topic: flags.topic ?? '' }),
  show: (res) => res.message,
});
