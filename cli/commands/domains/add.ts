import { Args } from '@oclif/core';
import { accountFlag, AdminCommand } from '../../lib/base-command.js';
import { showDomain } from '../../lib/show.js';

export default class DomainsAdd extends AdminCommand {
  static override summary = 'Add a sender domain to an account; prints the DNS records that verify it.';
  static override examples = [
    '<%= config.bin %> <%= command.id %> mail.acme.com --account acc_01JZ8Q4V6T3N2K5M7P9R0S1T2U',
    '<%= config.bin %> <%= command.id %> mail.acme.com -a acc_01JZ8Q4V6T3N2K5M7P9R0S1T2U --json',
  ];

  static override args = { name: Args.string({ description: 'Domain name.', required: true }) };
  static override flags = { account: accountFlag };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(DomainsAdd);
    const api = await this.adminClient(flags);
    const domain = await api.createDomain({ accountId: flags.account, name: args.name });
    await this.print(flags.json, domain, () => {
      this.log(showDomain(domain));
      this.log(`\nPublish the records above, then: ${this.config.bin} domains verify ${domain.id}`);
    });
  }
}
