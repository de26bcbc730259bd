import { Flags } from '@oclif/core';
import { adminCommand, idArg } from '../../lib/define-command.js';
import { showDomain } from '../../lib/show.js';

export default adminCommand({
  summary: 'Verify a domain by its DNS records (or at once with --force).',
  description: 'The first verified domain of an account raises a daily quota of 100 to 1,000.',
  examples: ['dom_01JZ8Q4V6T3N2K5M7P9R0S1T2U', 'dom_01JZ8Q4V6T3N2K5M7P9R0S1T2U --force'],
  args: { id: idArg('Domain id (dom_...).') },
  flags: { force: Flags.boolean({ summary: 'Operator override: verify without checking DNS.' }) },
  call: (api, { args, flags }) => api.verifyDomain({ id: args.id, force: flags.force }),
  show: (domain) =>
    domain.verified
      ? showDomain(domain)
      : `${showDomain(domain)}\n\nNot verified yet: the ownership, spf and dkim records above must all be verified. Try again once DNS has them, or use --force.`,
});
