import { adminCommand, idArg } from '../../lib/define-command.js';
import { showDomain } from '../../lib/show.js';

export default adminCommand({
  summary: 'Start a DKIM key rotation: a new key (new selector) to publish next to the current one.',
  description:
    'The current key keeps signing until the new record is found in DNS (by `domains verify`, or the periodic re-check); ' +
    'the new key then signs and the old one is retired (its record may be removed a few days later). ' +
    'One rotation at a time: while a new key is pending, another rotation is refused (409 conflict).',
  examples: ['dom_01JZ8Q4V6T3N2K5M7P9R0S1T2U'],
  args: { id: idArg('Domain id (dom_...).') },
  call: (api, { args }) => api.rotateDomainDkim({ id: args.id }),
  show: (domain, { bin }) =>
    `${showDomain(domain)}\n\nPublish the pending dkim record above, then: ${bin} domains verify ${domain.id}`,
});
