import { Flags } from '@oclif/core';
import { commandExamples } from '../../lib/define-command.js';
import { pageLine, table } from '../../lib/format.js';
import { inboxAccountFlag, InboundCommand } from '../../lib/inbound-command.js';
import { INBOUND_HEADERS, inboundRows } from '../../lib/inbound-show.js';
import { sampleId } from '../../lib/command-parts.js';

/** One page of an inbox, newest first: the account's with its API key, any account's with --account (operators). */
export default class InboundList extends InboundCommand {
  static override summary = 'List the inbound mail received for the routes, newest first.';
  static override description =
    "With an API key (permission all or read_only): its account's inbox. Operators: --account <id> with the admin token. " +
    '`inbound get <id>` shows one message; `inbound tail` follows new ones.';
  static override examples = commandExamples(['', '--page 2 --page-size 50', `--account ${sampleId('acc')} --json`]);
  static override flags = {
    account: inboxAccountFlag,
    page: Flags.integer({ summary: 'Page number, from 1.', default: 1, min: 1 }),
    'page-size': Flags.integer({ summary: 'Messages per page (up to 100).', default: 20, min: 1, max: 100 }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(InboundList);
    const inbox = await this.inbox(flags, flags.account === undefined ? undefined : { accountId: flags.account });
    const res = await inbox.list({ page: flags.page, pageSize: flags['page-size'] });
    await this.print(flags.json, res, () =>
      this.log(
        `${table(INBOUND_HEADERS, inboundRows(res.inboundEmails))}\n${pageLine(flags.page, flags['page-size'], res.total)}`,
      ),
    );
  }
}
