import { sampleId } from '../../lib/command-parts.js';
import { confirmed } from '../../lib/command-parts.js';
import { emailCommand } from '../../lib/define-command.js';
import { templateArg } from '../../lib/template-input.js';

export default emailCommand({
  summary: 'Delete a template: later sends naming it are refused (400), and its alias is free again.',
  description: 'Emails already sent from it keep their rendered content and their template id and version.',
  examples: [sampleId('tpl'), 'welcome --json'],
  args: { id: templateArg },
  call: (api, { args }) => api.deleteTemplate({ id: args.id }),
  show: confirmed('Deleted'),
});
