import { Flags } from '@oclif/core';
import { emailCommand } from '../../lib/define-command.js';
import { pageLine, table } from '../../lib/format.js';
import { TEMPLATE_HEADERS, templateRows } from '../../lib/template-show.js';

export default emailCommand({
  summary: "List the account's templates, newest first (their latest version's subject).",
  examples: ['', '--page 2 --page-size 50', '--json'],
  flags: {
    page: Flags.integer({ summary: 'Page number, from 1.', default: 1, min: 1 }),
    'page-size': Flags.integer({ summary: 'Templates per page (up to 100).', default: 20, min: 1, max: 100 }),
  },
  call: (api, { flags }) => api.listTemplates({ page: flags.page, pageSize: flags['page-size'] }),
  show: (res, { flags }) =>
    `${table(TEMPLATE_HEADERS, templateRows(res.templates))}\n${pageLine(flags.page, flags['page-size'], res.total)}`,
});
