import { Flags } from '@oclif/core';
import { sampleId } from '../../lib/command-parts.js';
import { emailCommand } from '../../lib/define-command.js';
import { templateArg } from '../../lib/template-input.js';
import { showTemplate } from '../../lib/template-show.js';

export default emailCommand({
  summary: 'Show a template with its html and text: its latest version, or the one --version names.',
  examples: [sampleId('tpl'), 'welcome --version 1', 'welcome --json'],
  args: { id: templateArg },
  flags: {
    version: Flags.integer({ summary: 'Show this version (default: the latest).', min: 1 }),
  },
  call: (api, { args, flags }) =>
    flags.version === undefined
      ? api.getTemplate({ id: args.id })
      : api.getTemplateVersion({ id: args.id, version: flags.version }),
  show: (t) => showTemplate(t, { bodies: true }),
});
