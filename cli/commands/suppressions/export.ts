import fs from 'node:fs/promises';
import { Flags } from '@oclif/core';
import { emailCommand } from '../../lib/define-command.js';

export default emailCommand({
  summary: 'Every suppression of the account as CSV (email,reason,scope,topic,created_at), to stdout or a file.',
  description:
    'Cells a spreadsheet would read as a formula (starting with = + - @) are written with a leading apostrophe; ' +
    '`suppressions import` takes it off again. Needs an API key with permission all or read_only.',
  examples: ['', '--output suppressions.csv'],
  flags: { output: Flags.string({ char: 'o', summary: 'Write the CSV to this file instead of standard output.' }) },
  call: async (api, { flags }) => {
    const res = await api.exportSuppressions({});
    if (flags.output !== undefined) await fs.writeFile(flags.output, res.csv);
    return res;
  },
  show: (res, { flags, note }) => {
    // The CSV as it is (no trailing line of the logger's own).
    if (flags.output === undefined) process.stdout.write(res.csv);
    else note(`${Math.max(res.csv.split('\r\n').length - 2, 0)} suppressions written to ${flags.output}`);
  },
});
