import { Args, Flags } from '@oclif/core';
import { sampleId } from '../../lib/command-parts.js';
import { adminCommand } from '../../lib/define-command.js';
import { showErasure } from '../../lib/show-erasure.js';

export default adminCommand({
  summary: 'Erase every trace of one address (GDPR), in one account or the whole installation.',
  description:
    'Every email the address was in (from, to, cc, bcc, reply_to) keeps its id, status and timestamps, with the address replaced by ' +
    "erased@erased.invalid and its subject, bodies, headers, tags and attachments dropped; the address is also removed from those emails' events, " +
    'webhook attempts and scheduled emails, and from Idempotency-Key answers; caught mail to or from it is deleted. A suppression of the address ' +
    'stays as a salted digest, so mail to it is still refused. Emails still being delivered and scheduled emails still enqueued are left (and counted): ' +
    'run this again once they are done.',
  examples: ['jane@example.net', `jane@example.net --account ${sampleId('acc')} --json`],
  args: {
    address: Args.string({
      description: 'The bare address (user@example.com), matched without regard to case.',
      required: true,
    }),
  },
  flags: {
    account: Flags.string({
      char: 'a',
      description: 'Only this account (acc_...); default: every account and the caught mail.',
    }),
  },
  call: (api, { args, flags }) => api.eraseRecipient({ address: args.address, accountId: flags.account ?? '' }),
  show: (res, { flags }) =>
    showErasure(res, flags.account ? `the address in ${flags.account}` : 'the address in every account'),
});
