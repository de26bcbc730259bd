import { Args, Flags } from '@oclif/core';
import { AdminCommand } from '../../lib/base-command.js';
import { showDomain } from '../../lib/show.js';

export default class DomainsTracking extends AdminCommand {
  static override summary = 'Turn open and click tracking of a domain on or off.';
  static override description = 'Open tracking adds a pixel and click tracking rewrites links, in HTML mail sent from this domain. Both start off.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> dom_01JZ8Q4V6T3N2K5M7P9R0S1T2U --open --click',
    '<%= config.bin %> <%= command.id %> dom_01JZ8Q4V6T3N2K5M7P9R0S1T2U --no-click',
  ];

  static override args = { id: Args.string({ description: 'Domain id (dom_...).', required: true }) };
  static override flags = {
    open: Flags.boolean({ summary: 'Open tracking on (--no-open: off).', allowNo: true, atLeastOne: ['open', 'click'] }),
    click: Flags.boolean({ summary: 'Click tracking on (--no-click: off).', allowNo: true, atLeastOne: ['open', 'click'] }),
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(DomainsTracking);
    const api = await this.adminClient(flags);
    const domain = await api.updateDomain({ id: args.id, openTracking: flags.open, clickTracking: flags.click });
    await this.print(flags.json, domain, () => this.log(showDomain(domain)));
  }
}
