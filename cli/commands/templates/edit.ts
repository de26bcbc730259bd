import { Flags } from '@oclif/core';
import { sampleId } from '../../lib/command-parts.js';
import { emailCommand } from '../../lib/define-command.js';
import { templateArg, templateContentFlags, templateContentFromFlags } from '../../lib/template-input.js';
import { showTemplate } from '../../lib/template-show.js';

export default emailCommand({
  summary: 'Edit a template: the fields given make a new version; sends keep the published one until you publish it.',
  description:
    'Only the flags given change; the rest is kept from the latest version. --variables-file and ' +
    '--localizations-file replace the whole list or object (a file holding [] or {} removes them all); ' +
    '--alias "" removes the alias. With --publish the new version is published at once.',
  examples: [
    `${sampleId('tpl')} --subject "Welcome aboard, {{name}}"`,
    'welcome --html-file welcome-v2.html --publish',
    'welcome --variables-file vars.json --json',
  ],
  args: { id: templateArg },
  flags: {
    ...templateContentFlags('edit'),
    publish: Flags.boolean({ summary: 'Publish the new version, so that sends use it from now on.' }),
  },
  call: async (api, { args, flags }) => {
    const { updateTemplateRequestFromJson } = await import('../../lib/rpc.js');
    const edited = await api.updateTemplate(
      updateTemplateRequestFromJson({ id: args.id, ...(await templateContentFromFlags(flags)) }),
    );
    return flags.publish ? api.publishTemplate({ id: edited.id, version: edited.version }) : edited;
  },
  show: (t, { args, bin, log, note }) => {
    log(showTemplate(t, { bodies: false }));
    if (t.publishedVersion !== t.version)
      note(
        `Sends still use version ${t.publishedVersion}; publish this one with: ${bin} templates publish ${args.id} --version ${t.version}`,
      );
  },
});
