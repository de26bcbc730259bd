import { Flags } from '@oclif/core';
import { sampleId } from '../../lib/command-parts.js';
import { emailCommand } from '../../lib/define-command.js';
import { templateArg } from '../../lib/template-input.js';
import { showTemplate } from '../../lib/template-show.js';

export default emailCommand({
  summary: 'Publish a version of a template: the one sends use from now on (default: the latest).',
  description: 'Publishing an older version rolls the template back; no version is ever changed or removed.',
  examples: [sampleId('tpl'), 'welcome --version 2', 'welcome --version 1 --json'],
  args: { id: templateArg },
  flags: {
    version: Flags.integer({ summary: 'The version to publish (default: the latest).', min: 1 }),
  },
  call: (api, { args, flags }) => api.publishTemplate({ id: args.id, version: flags.version ?? 0 }),
  show: (t) => `Published version ${t.publishedVersion}\n${showTemplate(t, { bodies: false })}`,
});
