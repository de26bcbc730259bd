import { sampleId } from '../../lib/command-parts.js';
import { emailCommand } from '../../lib/define-command.js';
import { renderFlags, templateArg, variablesFromFlags } from '../../lib/template-input.js';
import { showRendered } from '../../lib/template-show.js';

export default emailCommand({
  summary: 'Render a template with variables, as a send would, without sending anything.',
  description:
    'Renders the published version (or --version) and prints the subject, html and text; a variable the ' +
    'template needs and the command does not give is refused, naming it, as a send would be.',
  examples: [
    `${sampleId('tpl')} --var name=Ann`,
    'welcome --var name=Ann --var user.plan=pro --locale de-AT',
    `receipt --variables-file order.json --version 3 --json`,
  ],
  args: { id: templateArg },
  flags: renderFlags,
  call: async (api, { args, flags }) =>
    api.renderTemplate({
      id: args.id,
      variables: await variablesFromFlags(flags),
      locale: flags.locale ?? '',
      version: flags.version ?? 0,
    }),
  show: showRendered,
});
