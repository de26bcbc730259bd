import { Args } from '@oclif/core';
import { AdminCommand } from '../../lib/base-command.js';

export default class KeysDelete extends AdminCommand {
  static override summary = 'Delete an API key: it fails with 401 from the next request on.';
  static override description = 'To rotate a key: create the new one, move your applications to it, then delete the old one.';
  static override examples = ['<%= config.bin %> <%= command.id %> key_01JZ8Q4V6T3N2K5M7P9R0S1T2U'];

  static override args = { id: Args.string({ description: 'API key id (key_...).', required: true }) };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(KeysDelete);
    const api = await this.adminClient(flags);
    const res = await api.deleteApiKey({ id: args.id });
    await this.print(flags.json, res, () => this.log(res.message || `Deleted ${args.id}`));
  }
}
