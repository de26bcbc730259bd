import { Args } from '@oclif/core';
import { adminCommand } from '../../lib/define-command.js';
import { sitesTable } from '../../lib/egress-show.js';

export default adminCommand({
  summary: "End a site's suspension, throttle and source suspensions now.",
  description:
    'Every worker sees it within seconds and sends to the site again at its configured rate; a rule the site ' +
    'triggers again suspends it again. A site neither in the rules file nor in the state is an error.',
  examples: ['google', 'outlook.com --json'],
  args: { site: Args.string({ description: 'The site, as `egress status` lists it.', required: true }) },
  call: (api, { args }) => api.resumeEgressSite({ site: args.site }),
  show: (site) => `Resumed ${site.site}\n${sitesTable([site])}`,
});
