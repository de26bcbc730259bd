import { Flags } from '@oclif/core';
import { sampleId } from '../../../lib/command-parts.js';
import { commandExamples, idArg } from '../../../lib/define-command.js';
import { InboundRoutesCommand } from '../../../lib/inbound-routes.js';

/** Deletes a route: its address takes no more mail; what it received stays. */
export default class InboundRoutesDelete extends InboundRoutesCommand {
  static override summary = 'Delete an inbound route: its address takes no more mail (mail it received stays).';
  static override description =
    "With an API key (permission all): a route of its account (another account's is not found). " +
    "Operators: --admin, with the admin token (any account's route, by its id).";
  static override examples = commandExamples([sampleId('rt'), `${sampleId('rt')} --admin --json`]);
  static override args = { id: idArg('Inbound route id (rt_...).') };
  static override flags = {
    admin: Flags.boolean({ summary: "Delete as the operator, with the admin token (any account's route)." }),
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(InboundRoutesDelete);
    const book = await this.routeBook(flags, flags.admin ? {} : undefined);
    const res = await book.delete(args.id);
    await this.print(flags.json, res, () => this.log(res.message || `Deleted ${args.id}`));
  }
}
