import { Args, Flags } from '@oclif/core';
import { emailCommand } from '../../lib/define-command.js';
import { topicOf } from '../../lib/suppression-show.js';

export default emailCommand({
  summary: 'Suppress an address (reason manual): all its mail, or its broadcast mail (of one topic, or all).',
  description:
    'Adding a suppression the account has already answers it again, as stored. Needs an API key with permission all.',
  examples: [
    'user@example.org',
    'user@example.org --scope broadcast',
    'user@example.org --scope broadcast --topic news',
  ],
  args: { email: Args.string({ description: 'One bare address.', required: true }) },
  flags: {
    scope: Flags.option({
      options: ['all', 'broadcast'] as const,
      summary: 'all (the default): every email; broadcast: broadcast emails only.',
    })(),
    topic: Flags.string({ summary: 'With --scope broadcast: that topic alone (default: every topic).' }),
  },
  call: (api, { args, flags }) =>
    api.addSuppression({ email: args.email, scope: flags.scope ?? '', topic: flags.topic ?? '' }),
  show: (s) => {
    const topic = topicOf(s.topic);
    return `Suppressed ${s.email}: ${s.scope === 'all' ? 'all mail' : `broadcast mail${topic === '' ? '' : ` of topic ${topic}`}`} (${s.reason}, since ${s.createdAt})`;
  },
});
