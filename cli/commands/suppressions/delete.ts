import { Args } from '@oclif/core';
import { AdminCommand } from '../../lib/base-command.js';

export default class SuppressionsDelete extends AdminCommand {
  static override summary = 'Remove an address from its account\'s suppression list: mail to it is sent again.';
  static override examples = ['<%= config.bin %> <%= command.id %> sup_01JZ8Q4V6T3N2K5M7P9R0S1T2U'];

  static override args = { id: Args.string({ description: 'Suppression id (sup_...).', required: true }) };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(SuppressionsDelete);
    const api = await this.adminClient(flags);
    const res = await api.deleteSuppression({ id: args.id });
    await this.print(flags.json, res, () => this.log(res.message || `Removed ${args.id}`));
  }
}
