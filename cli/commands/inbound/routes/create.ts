import { Args } from '@oclif/core';
import { sampleId } from '../../../lib/command-parts.js';
import { commandExamples } from '../../../lib/define-command.js';
import { inboxAccountFlag } from '../../../lib/inbound-command.js';
import { InboundRoutesCommand, showRoute } from '../../../lib/inbound-routes.js';

/** A new route: mail to its match is the account's. */
export default class InboundRoutesCreate extends InboundRoutesCommand {
  static override summary = 'Receive mail at local@domain, or *@domain (every local part), on a verified domain.';
  static override description =
    'The domain is a verified domain of the account or a subdomain of one; a match another route (of any account) ' +
    'has is refused (409). Mail to local+anything@domain reaches local@domain, the part after + as its mailbox_hash. ' +
    'Publish the MX record the domain then lists (purpose inbound; `domains verify` shows and checks it). ' +
    'With an API key (permission all): its account. Operators: --account <id> with the admin token.';
  static override examples = commandExamples([
    'support@acme.com',
    "'*@in.acme.com' --json",
    `support@acme.com --account ${sampleId('acc')}`,
  ]);
  static override args = {
    match: Args.string({ description: 'local@domain, or *@domain for every address at the domain.', required: true }),
  };
  static override flags = {
    account: {
      ...inboxAccountFlag,
      summary: 'Add the route to this account as the operator, with the admin token (acc_...).',
    },
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(InboundRoutesCreate);
    const book = await this.routeBook(flags, flags.account === undefined ? undefined : { accountId: flags.account });
    const route = await book.create(args.match);
    await this.print(flags.json, route, () => this.log(showRoute(route)));
  }
}
