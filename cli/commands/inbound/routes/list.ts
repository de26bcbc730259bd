import { Flags } from '@oclif/core';
import { sampleId } from '../../../lib/command-parts.js';
import { commandExamples } from '../../../lib/define-command.js';
import { pageLine, table } from '../../../lib/format.js';
import { inboxAccountFlag } from '../../../lib/inbound-command.js';
import { InboundRoutesCommand, ROUTE_HEADERS, routeRows } from '../../../lib/inbound-routes.js';

/** One page of the account's routes, newest first. */
export default class InboundRoutesList extends InboundRoutesCommand {
  static override summary = "List the account's inbound routes, newest first.";
  static override description =
    'With an API key (permission all or read_only): its account. Operators: --account <id> with the admin token.';
  static override examples = commandExamples(['', '--page 2 --page-size 50', `--account ${sampleId('acc')} --json`]);
  static override flags = {
    account: {
      ...inboxAccountFlag,
      summary: "List this account's routes as the operator, with the admin token (acc_...).",
    },
    page: Flags.integer({ summary: 'Page number, from 1.', default: 1, min: 1 }),
    'page-size': Flags.integer({ summary: 'Routes per page (up to 100).', default: 20, min: 1, max: 100 }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(InboundRoutesList);
    const book = await this.routeBook(flags, flags.account === undefined ? undefined : { accountId: flags.account });
    const res = await book.list({ page: flags.page, pageSize: flags['page-size'] });
    await this.print(flags.json, res, () =>
      this.log(
        `${table(ROUTE_HEADERS, routeRows(res.routes))}\n${pageLine(flags.page, flags['page-size'], res.total)}`,
      ),
    );
  }
}
