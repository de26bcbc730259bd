import { Flags } from '@oclif/core';
import { usageError } from '../../lib/base-command.js';
import { idArg, commandExamples } from '../../lib/define-command.js';
import { InboundCommand, saveChunks } from '../../lib/inbound-command.js';
import { showInbound } from '../../lib/inbound-show.js';
import { sampleId } from '../../lib/command-parts.js';

/**
 * One inbound message: its parsed fields (or --json, the API's message), or its bytes: the message exactly as
 * received (--raw), or one attachment (--attachment n), to stdout or a file.
 */
export default class InboundGet extends InboundCommand {
  static override summary = 'Show one inbound message, or save its raw message or an attachment.';
  static override description =
    'The message as parsed: sender, recipients, authentication (SPF, DKIM, DMARC), the email of ours it answers, ' +
    'its attachments numbered from 0, its text. --raw writes the message exactly as received (message/rfc822) and ' +
    '--attachment n attachment n, to stdout or --output, streamed. ' +
    'With an API key: a message of its account. Operators: --admin, with the admin token (the id names the message).';
  static override examples = commandExamples([
    sampleId('in'),
    `${sampleId('in')} --json`,
    `${sampleId('in')} --raw > message.eml`,
    `${sampleId('in')} --attachment 0 --output invoice.pdf`,
    `${sampleId('in')} --admin --raw --output message.eml`,
  ]);
  static override args = { id: idArg('Inbound email id (in_...).') };
  static override flags = {
    raw: Flags.boolean({
      summary: 'Write the message exactly as received (message/rfc822).',
      exclusive: ['attachment'],
    }),
    attachment: Flags.integer({ summary: 'Write attachment n (from 0, as `inbound get` numbers them).', min: 0 }),
    output: Flags.string({ char: 'o', summary: 'With --raw or --attachment: write to this file instead of stdout.' }),
    admin: Flags.boolean({ summary: 'Read as the operator, with the admin token (any account).' }),
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(InboundGet);
    const bytes = flags.raw || flags.attachment !== undefined;
    if (bytes && flags.json)
      throw usageError('--json shows the parsed message: leave it out with --raw or --attachment');
    if (!bytes && flags.output !== undefined) throw usageError('--output is for --raw or --attachment');
    const inbox = await this.inbox(flags, flags.admin ? {} : undefined);
    if (!bytes) {
      const message = await inbox.get(args.id);
      await this.print(flags.json, message, () => this.log(showInbound(message)));
      return;
    }
    const chunks = flags.raw ? inbox.raw(args.id) : inbox.attachment(args.id, flags.attachment ?? 0);
    const saved = await saveChunks(chunks, flags.output);
    if (flags.output !== undefined) {
      const what = flags.raw
        ? 'the raw message'
        : `attachment ${flags.attachment}${saved.filename ? ` (${saved.filename})` : ''}`;
      this.note(`${what}: ${saved.bytes} bytes of ${saved.contentType} written to ${flags.output}`);
    }
  }
}
