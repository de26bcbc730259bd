import { emailCommand } from '../../lib/define-command.js';
import { templateContentFlags, templateContentFromFlags } from '../../lib/template-input.js';
import { showTemplate } from '../../lib/template-show.js';

export default emailCommand({
  summary: 'Create a template: stored Handlebars content that sends name instead of their own subject and bodies.',
  description:
    'The template starts at version 1, published. Variables the content uses ({{name}}, {{#each items}}) are ' +
    'required in every send unless --variables-file declares them with a default or "required": false. ' +
    'Needs an API key with permission all.',
  examples: [
    '--name Welcome --alias welcome --subject "Welcome, {{name}}" --html-file welcome.html --text "Hi {{name}}"',
    '--name Receipt --subject "Receipt {{number}}" --html-file receipt.html --variables-file vars.json --localizations-file locales.json --json',
  ],
  flags: templateContentFlags('create'),
  call: async (api, { flags }) => {
    const { createTemplateRequestFromJson } = await import('../../lib/rpc.js');
    return api.createTemplate(createTemplateRequestFromJson(await templateContentFromFlags(flags)));
  },
  show: (t, { bin, log, note }) => {
    log(showTemplate(t, { bodies: false }));
    note(`Send it with: ${bin} emails send --template ${t.alias ?? t.id} --var name=value ...`);
  },
});
