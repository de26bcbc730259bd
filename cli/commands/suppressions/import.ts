import fs from 'node:fs/promises';
import { Args } from '@oclif/core';
import { usageError } from '../../lib/base-command.js';
import { emailCommand } from '../../lib/define-command.js';

export default emailCommand({
  summary: 'Import suppressions from a CSV file: header email[,scope[,topic]], up to 100,000 rows (reason manual).',
  description:
    'Bad rows are listed by their line in the file (the header is line 1) and the others imported; rows the ' +
    'account has already are skipped. `-` reads the file from standard input. Needs an API key with permission all.',
  examples: ['suppressions.csv', 'export.csv --json', '- < list.csv'],
  args: { file: Args.string({ description: 'The CSV file, or - for standard input.', required: true }) },
  call: async (api, { args }) => {
    let csv: string;
    try {
      csv = args.file === '-' ? await readStdin() : await fs.readFile(args.file, 'utf8');
    } catch (err) {
      throw usageError(`cannot read ${args.file}: ${(err as Error).message}`);
    }
    return api.importSuppressions({ csv });
  },
  show: (res, { log }) => {
    log(`Imported ${res.imported}, skipped ${res.skipped} already suppressed, ${res.errors.length} rows refused`);
    for (const e of res.errors) log(`  line ${e.line}: ${e.message}`);
  },
});

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
