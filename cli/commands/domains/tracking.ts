import { Flags } from '@oclif/core';
import { adminCommand, idArg } from '../../lib/define-command.js';
import { showDomain } from '../../lib/show.js';

export default adminCommand({
  summary: 'Turn open and click tracking of a domain on or off.',
  description:
    'Open tracking adds a pixel and click tracking rewrites links, in HTML mail sent from this domain. Both start off.',
  examples: ['dom_01JZ8Q4V6T3N2K5M7P9R0S1T2U --open --click', 'dom_01JZ8Q4V6T3N2K5M7P9R0S1T2U --no-click'],
  args: { id: idArg('Domain id (dom_...).') },
  flags: {
    open: Flags.boolean({
      summary: 'Open tracking on (--no-open: off).',
      allowNo: true,
      atLeastOne: ['open', 'click'],
    }),
    click: Flags.boolean({
      summary: 'Click tracking on (--no-click: off).',
      allowNo: true,
      atLeastOne: ['open', 'click'],
    }),
  },
  call: (api, { args, flags }) =>
    api.updateDomain({ id: args.id, openTracking: flags.open, clickTracking: flags.click }),
  show: showDomain,
});
